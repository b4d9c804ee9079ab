// Package contract is the REST contract at run time, usable with or without HTTP: the embedded OpenAPI
// document, the operations it declares (with the function serving each, its credential and its rate
// group, from the x-css-* extensions), request validation derived from it, and the Go input type of every
// operation (requests_gen.go).
//
// A request is validated once and decoded once: Operation.Decode (or ValidateParams and ValidateBody, then
// Bind) checks parameters and a strictly decoded body against the document and fills the operation's
// input type. A REST handler, an MCP tool and a queue worker all go through it, and the services check the
// body types they receive with their Validate method, which applies the same compiled schema, so every
// caller gets the same rules and the same error (code VALIDATION_ERROR, message naming the field).
// ValidateJSON checks any other JSON value (a model's output, a queue message) against any component
// schema of the document, response side included.
//
// The document is written in openapi.yaml; `go generate ./shared/contract` writes openapi.json (served as
// is), openapi.json.gz (the same, gzip-compressed once at generation, served to clients that accept
// gzip), contract.json (only what routing and validation read), static_gen.go (contract.json decoded, as
// static data), schemas.json (every component schema) and requests_gen.go; openapi.json, its gzip and
// schemas.json are embedded. Load returns the static contract, decoding nothing, and each operation
// compiles its validator the first time it is used, so a Lambda pays only for the operations it serves.
// kin-openapi and YAML parsing are used by the generator and the tests, never here.
package contract

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/creatorstrategy/css/shared/contract/internal/decode"
)

//go:generate go run ./internal/gen

//go:embed openapi.json
var document string

// documentGzip is document as a gzip stream (docgen.Gzip), made by `go generate` so that no cold start
// pays for compressing it.
//
//go:embed openapi.json.gz
var documentGzip string

// Document returns the OpenAPI document as served (JSON bytes, embedded). The caller owns the slice.
func Document() []byte { return []byte(document) }

// DocumentGzip returns Document gzip-compressed (embedded, about a sixth of its size). The caller owns the
// slice.
func DocumentGzip() []byte { return []byte(documentGzip) }

// Contract is the set of operations of the document. It is safe for concurrent use.
type Contract struct {
	// Operations are in document order.
	Operations []*Operation
	byID       []*Operation // Operations sorted by ID

	comps    *components
	compMu   sync.Mutex
	compiler *compiler // component schemas compiled so far (checkComponent)
}

// Operation is one operation of the document.
type Operation struct {
	ID     string // operationId
	Method string // "GET", ...
	Path   string // e.g. "/api/v1/series/{id}" (ServeMux-compatible braces)
	Tag    string // e.g. "Planning"
	// Function is the Lambda serving the operation (x-css-function).
	Function string
	// Credential is what the operation takes (x-css-credential).
	Credential Credential
	// RateGroup is the per-key rate limit the operation counts against (x-css-rate-group); "" when
	// Credential is CredentialNone.
	RateGroup RateGroup
	// Public: the operation takes no credential (Credential is CredentialNone, and the document says
	// security: []).
	Public  bool
	HasBody bool // the operation declares a requestBody
	// BodyRequired is the requestBody's required flag.
	BodyRequired bool
	// SuccessStatus is the lowest 2xx response code declared (200, 201, 204).
	SuccessStatus int

	src      opSource
	once     sync.Once
	compiled *validator
	err      error
}

// Credential is what an operation accepts as authentication (the x-css-credential extension).
type Credential string

const (
	// CredentialNone: no credential (security: []).
	CredentialNone Credential = decode.CredentialNone
	// CredentialChannel: an API key, or a session token with X-Channel-Id; the operation acts on one channel.
	CredentialChannel Credential = decode.CredentialChannel
	// CredentialSession: a session token only, never an API key (decision 4); acts on the account.
	CredentialSession Credential = decode.CredentialSession
)

// RateGroup names a per-key request rate limit (decisions 6-7; the x-css-rate-group extension).
type RateGroup string

const (
	RateGeneration RateGroup = decode.RateGeneration
	RateOther      RateGroup = decode.RateOther
)

// opSource is what an operation's validator is compiled from, kept as raw JSON until first use.
type opSource struct {
	comps      *components
	pathParams []string // declared on the path item
	opParams   []string // declared on the operation; they override the path item's
	bodySchema string   // the JSON schema of the request body, if any
}

// components holds the raw components an operation may reference.
type components = decode.Components

// Load returns the runtime contract (contract.json), which `go generate` wrote as static data
// (static_gen.go): a cold start decodes nothing, and Load allocates nothing. Every call returns the same
// Contract, whose validators compile once, on first use, for all callers; callers must not modify it or
// its Operations.
func Load() (*Contract, error) { return &static, nil }

// LoadDocument decodes the full served document, descriptions included, into a Contract: for what is
// generated from the contract and shown to people and models (the MCP tool list), not for serving. Each
// call decodes anew and returns a Contract of its own.
func LoadDocument() (*Contract, error) { return load(document) }

// Operation returns the operation with the operationId id, nil if none.
func (c *Contract) Operation(id string) *Operation {
	// byID is sorted by ID: a binary search, as the static contract can hold no map.
	i := sort.Search(len(c.byID), func(i int) bool { return c.byID[i].ID >= id })
	if i < len(c.byID) && c.byID[i].ID == id {
		return c.byID[i]
	}
	return nil
}

// load decodes doc, a JSON OpenAPI document, into a Contract of its own.
func load(doc string) (*Contract, error) {
	d, err := decode.Decode(doc)
	if err != nil {
		return nil, err
	}
	c := &Contract{comps: &d.Components}
	ops := make([]Operation, len(d.Operations))
	c.Operations = make([]*Operation, len(ops))
	for i, o := range d.Operations {
		ops[i] = Operation{
			ID: o.ID, Method: o.Method, Path: o.Path, Tag: o.Tag, Function: o.Function,
			Credential: Credential(o.Credential), RateGroup: RateGroup(o.RateGroup), Public: o.Public,
			HasBody: o.HasBody, BodyRequired: o.BodyRequired, SuccessStatus: o.SuccessStatus,
			src: opSource{comps: c.comps, pathParams: o.PathParams, opParams: o.Params, bodySchema: o.BodySchema},
		}
		c.Operations[i] = &ops[i]
	}
	c.byID = sortedByID(c.Operations)
	return c, nil
}

// sortedByID returns ops sorted by operationId, for Contract.Operation.
func sortedByID(ops []*Operation) []*Operation {
	byID := slices.Clone(ops)
	sort.Slice(byID, func(i, j int) bool { return byID[i].ID < byID[j].ID })
	return byID
}

// validator returns the operation's compiled validator, compiling it on first use.
func (op *Operation) validator() (*validator, error) {
	op.once.Do(func() {
		op.compiled, op.err = compileOperation(&op.src)
		if op.err != nil {
			op.err = fmt.Errorf("api: operation %s: %w", op.ID, op.err)
		}
	})
	return op.compiled, op.err
}
