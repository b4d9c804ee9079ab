package contract

import _ "embed"

// contract is the runtime part of the document (see docgen.Runtime), as generated: the tests check that
// the static contract Load returns (static_gen.go) is what decoding it gives. Only tests embed it, so no
// binary carries it twice.
//
//go:embed contract.json
var contract string
