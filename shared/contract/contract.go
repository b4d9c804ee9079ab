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
// gzip), contract.json (only what routing and validation read), schemas.json (every component schema) and
// requests_gen.go; the JSON files are embedded. Load decodes contract.json, and each operation compiles its
// validator the first time it is used, so a Lambda pays only for the operations it serves. kin-openapi
// and YAML parsing are used by the generator and the tests, never here.
package contract

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:generate go run ./internal/gen

//go:embed openapi.json
var document string

// contract is the runtime part of the document (see docgen.Runtime): Load scans it, not the whole document.
//
//go:embed contract.json
var contract string

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
	byID       map[string]*Operation

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
	CredentialNone Credential = "none"
	// CredentialChannel: an API key, or a session token with X-Channel-Id; the operation acts on one channel.
	CredentialChannel Credential = "channel"
	// CredentialSession: a session token only, never an API key (decision 4); acts on the account.
	CredentialSession Credential = "session"
)

// RateGroup names a per-key request rate limit (decisions 6-7; the x-css-rate-group extension).
type RateGroup string

const (
	RateGeneration RateGroup = "generation"
	RateOther      RateGroup = "other"
)

// opSource is what an operation's validator is compiled from, kept as raw JSON until first use.
type opSource struct {
	comps      *components
	pathParams []string // declared on the path item
	opParams   []string // declared on the operation; they override the path item's
	bodySchema string   // the JSON schema of the request body, if any
}

// components holds the raw components an operation may reference.
type components struct {
	schemas, parameters, requestBodies map[string]string
}

// Load decodes the embedded runtime contract into a Contract (call once, keep it).
func Load() (*Contract, error) { return load(contract) }

// LoadDocument decodes the full served document, descriptions included, into a Contract: for what is
// generated from the contract and shown to people and models (the MCP tool list), not for serving.
func LoadDocument() (*Contract, error) { return load(document) }

// Operation returns the operation with the operationId id, nil if none.
func (c *Contract) Operation(id string) *Operation { return c.byID[id] }

var httpMethods = map[string]bool{
	"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true,
}

// rawOperation is an operation as found in the document, before the global security applies.
type rawOperation struct {
	path, method  string
	pathParams    []string
	id            string
	tag           string
	hasSecurity   bool
	public        bool
	function      string
	credential    string
	rateGroup     string
	params        []string
	requestBody   string
	successStatus int
}

func load(doc string) (*Contract, error) {
	sc := &scanner{data: doc}
	comps := &components{}
	var raws []*rawOperation
	// Without a top-level security, an operation without its own would be public: make none so by default.
	globalPublic := false
	err := sc.object(func(key string) error {
		var err error
		switch key {
		case "security":
			globalPublic, err = sc.security()
		case "paths":
			raws, err = scanPaths(sc)
		case "components":
			err = sc.object(func(key string) error {
				var err error
				switch key {
				case "schemas":
					comps.schemas, err = sc.rawMap()
				case "parameters":
					comps.parameters, err = sc.rawMap()
				case "requestBodies":
					comps.requestBodies, err = sc.rawMap()
				default:
					_, err = sc.skip()
				}
				return err
			})
		default:
			_, err = sc.skip()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("api: decode document: %w", err)
	}

	c := &Contract{byID: make(map[string]*Operation, len(raws)), comps: comps}
	for _, raw := range raws {
		op, err := newOperation(raw, globalPublic, comps)
		if err != nil {
			return nil, fmt.Errorf("api: %s %s: %w", strings.ToUpper(raw.method), raw.path, err)
		}
		if c.byID[op.ID] != nil {
			return nil, fmt.Errorf("api: operationId %q is declared twice", op.ID)
		}
		c.byID[op.ID] = op
		c.Operations = append(c.Operations, op)
	}
	return c, nil
}

func scanPaths(sc *scanner) ([]*rawOperation, error) {
	var ops []*rawOperation
	err := sc.object(func(path string) error {
		if !strings.HasPrefix(path, "/") {
			return fmt.Errorf("path %q does not start with /", path)
		}
		var pathParams []string
		var item []*rawOperation
		err := sc.object(func(key string) error {
			switch key {
			case "parameters":
				var err error
				pathParams, err = sc.rawList()
				return err
			case "$ref":
				return fmt.Errorf("path %s: path item references are not supported", path)
			}
			if !httpMethods[key] {
				_, err := sc.skip()
				return err
			}
			op, err := scanOperation(sc)
			if err != nil {
				return fmt.Errorf("%s %s: %w", strings.ToUpper(key), path, err)
			}
			op.path, op.method = path, key
			item = append(item, op)
			return nil
		})
		// Path-item parameters may follow the operations in the document.
		for _, op := range item {
			op.pathParams = pathParams
		}
		ops = append(ops, item...)
		return err
	})
	return ops, err
}

func scanOperation(sc *scanner) (*rawOperation, error) {
	op := &rawOperation{}
	err := sc.object(func(key string) error {
		var err error
		switch key {
		case "operationId":
			op.id, err = sc.str()
		case "tags":
			err = sc.array(func() error {
				tag, err := sc.str()
				if op.tag == "" {
					op.tag = tag
				}
				return err
			})
		case "security":
			op.hasSecurity = true
			op.public, err = sc.security()
		case "x-css-function":
			op.function, err = sc.str()
		case "x-css-credential":
			op.credential, err = sc.str()
		case "x-css-rate-group":
			op.rateGroup, err = sc.str()
		case "parameters":
			op.params, err = sc.rawList()
		case "requestBody":
			op.requestBody, err = sc.skip()
		case "responses":
			err = sc.object(func(code string) error {
				// Atoi's n is 0, or out of this range, whenever it fails.
				status := 0
				if code == "2XX" {
					status = 200
				} else if n, _ := strconv.Atoi(code); n >= 200 && n <= 299 {
					status = n
				}
				if status != 0 && (op.successStatus == 0 || status < op.successStatus) {
					op.successStatus = status
				}
				_, err := sc.skip()
				return err
			})
		default:
			_, err = sc.skip()
		}
		return err
	})
	return op, err
}

func newOperation(raw *rawOperation, globalPublic bool, comps *components) (*Operation, error) {
	if raw.id == "" {
		return nil, errors.New("no operationId")
	}
	if raw.tag == "" {
		return nil, fmt.Errorf("%s: no tag", raw.id)
	}
	if raw.successStatus == 0 {
		return nil, fmt.Errorf("%s: no 2xx response", raw.id)
	}
	op := &Operation{
		ID:            raw.id,
		Method:        strings.ToUpper(raw.method),
		Path:          raw.path,
		Tag:           raw.tag,
		Function:      raw.function,
		Credential:    Credential(raw.credential),
		RateGroup:     RateGroup(raw.rateGroup),
		Public:        globalPublic,
		SuccessStatus: raw.successStatus,
		src:           opSource{comps: comps, pathParams: raw.pathParams, opParams: raw.params},
	}
	if raw.hasSecurity {
		op.Public = raw.public
	}
	if err := op.checkExtensions(); err != nil {
		return nil, fmt.Errorf("%s: %w", op.ID, err)
	}
	if raw.requestBody != "" && raw.requestBody != "null" {
		body, err := resolveRequestBody(raw.requestBody, comps)
		if err != nil {
			return nil, fmt.Errorf("%s: requestBody: %w", op.ID, err)
		}
		op.HasBody = true
		op.BodyRequired = body.required
		op.src.bodySchema = body.jsonSchema()
	}
	return op, nil
}

// checkExtensions holds the x-css extensions to the document's own security: every operation names its
// function and credential, only public operations take none, and every authenticated one has a rate group.
func (op *Operation) checkExtensions() error {
	if op.Function == "" {
		return errors.New("no x-css-function")
	}
	switch op.Credential {
	case CredentialNone:
		if !op.Public {
			return errors.New("x-css-credential none, but the document's security asks for a credential")
		}
		if op.RateGroup != "" {
			return errors.New("x-css-rate-group on an operation that takes no credential")
		}
		return nil
	case CredentialChannel, CredentialSession:
		if op.Public {
			return fmt.Errorf("x-css-credential %s, but the document's security is empty", op.Credential)
		}
	default:
		return fmt.Errorf("x-css-credential %q: want none, channel or session", op.Credential)
	}
	switch op.RateGroup {
	case RateGeneration, RateOther:
		return nil
	}
	return fmt.Errorf("x-css-rate-group %q: want generation or other", op.RateGroup)
}

type requestBody struct {
	required bool
	schemas  map[string]string // media type -> raw schema
}

func resolveRequestBody(raw string, comps *components) (*requestBody, error) {
	body := &requestBody{schemas: map[string]string{}}
	ref := ""
	sc := &scanner{data: raw}
	err := sc.object(func(key string) error {
		var err error
		switch key {
		case "$ref":
			ref, err = sc.str()
		case "required":
			var v string
			v, err = sc.skip()
			body.required = v == "true"
		case "content":
			err = sc.object(func(media string) error {
				return sc.object(func(key string) error {
					if key != "schema" {
						_, err := sc.skip()
						return err
					}
					schema, err := sc.skip()
					body.schemas[media] = schema
					return err
				})
			})
		default:
			_, err = sc.skip()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if ref != "" {
		// OpenAPI 3.0: the siblings of a $ref are ignored.
		target, err := lookup(ref, "#/components/requestBodies/", comps.requestBodies)
		if err != nil {
			return nil, err
		}
		return resolveRequestBody(target, comps)
	}
	return body, nil
}

// jsonSchema returns the schema of the body's JSON media type: application/json itself, else the first
// (in name order) application/json variant or +json type.
func (b *requestBody) jsonSchema() string {
	names := make([]string, 0, len(b.schemas))
	for name := range b.schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	pick := ""
	for _, name := range names {
		base := strings.ToLower(strings.TrimSpace(strings.SplitN(name, ";", 2)[0]))
		if base == "application/json" {
			pick = name
			break
		}
		if pick == "" && strings.HasSuffix(base, "+json") {
			pick = name
		}
	}
	return b.schemas[pick]
}

// lookup resolves a local reference of the form prefix+name in one components map.
func lookup(ref, prefix string, in map[string]string) (string, error) {
	name, ok := strings.CutPrefix(ref, prefix)
	if !ok {
		return "", fmt.Errorf("reference %q: only %s* references are supported here", ref, prefix)
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	target, ok := in[name]
	if !ok {
		return "", fmt.Errorf("reference %q: no such component", ref)
	}
	return target, nil
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
