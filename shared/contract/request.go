package contract

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/creatorstrategy/css/shared/apperr"
	"github.com/creatorstrategy/css/shared/contract/internal/decode"
)

// Request is implemented by the generated request type of each operation (requests_gen.go): its
// parameters and body as Go values. REST handlers, MCP tools and queue workers get one from the same
// validation, so they cannot disagree on what is valid.
type Request interface {
	// OperationID names the operation the type belongs to.
	OperationID() string
	bind(p Params, body any)
}

// RawRequest is a request as it arrives, before validation.
type RawRequest struct {
	Path   map[string]string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Decode validates raw against the operation's parameters and body and fills req, which must be the
// operation's own request type. The body is decoded once, strictly (see ValidateBody).
func (op *Operation) Decode(raw RawRequest, req Request) error {
	params, err := op.ValidateParams(raw.Path, raw.Query, raw.Header)
	if err != nil {
		return err
	}
	body, err := op.ValidateBody(raw.Body)
	if err != nil {
		return err
	}
	return op.Bind(params, body, req)
}

// Bind fills req from parameters and a body the operation has validated (ValidateParams, ValidateBody).
func (op *Operation) Bind(params Params, body any, req Request) error {
	if req.OperationID() != op.ID {
		return fmt.Errorf("contract: a %s request bound to operation %s", req.OperationID(), op.ID)
	}
	req.bind(params, body)
	return nil
}

// Optional is a nullable member that may also be absent: Set says it was given, Value is nil for null.
type Optional[T any] struct {
	Set   bool
	Value *T
}

// IsZero reports an absent member (omitzero leaves it out).
func (o Optional[T]) IsZero() bool { return !o.Set }

// MarshalJSON writes the value or null.
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if o.Value == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*o.Value)
}

// UnmarshalJSON is only called for a member that is present.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set, o.Value = true, nil
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	o.Value = new(T)
	return json.Unmarshal(b, o.Value)
}

// Some is a given, non-null Optional.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: &v} }

// Ptr returns a pointer to v, for the optional members of request types.
func Ptr[T any](v T) *T { return &v }

// numberInt and numberFloat convert numbers the validator accepted (integers are bounded in the document).
func numberInt(n json.Number) int {
	i, _ := n.Int64()
	return int(i)
}

func numberFloat(n json.Number) float64 {
	f, _ := n.Float64()
	return f
}

// embedded is the contract the generated types validate against: the static contract Load returns.
var embedded = &static

// checkComponent validates v against the component schema name and returns it normalized (defaults,
// lower-case UUIDs), as a request body is.
func checkComponent(name string, v any) (any, error) {
	s, err := embedded.component(name)
	if err != nil {
		return nil, err
	}
	if verr := s.validate(v, nil); verr != nil {
		return nil, verr
	}
	s.normalize(v)
	return v, nil
}

// component returns the compiled component schema name, compiling it on first use.
func (c *Contract) component(name string) (*schema, error) {
	c.compMu.Lock()
	defer c.compMu.Unlock()
	if c.compiler == nil {
		c.compiler = newCompiler(c.comps)
	}
	return c.compiler.ref("#/components/schemas/"+name, name)
}

// Value returns *p, or the zero value when p is nil (an optional member left out).
func Value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// schemasJSON is every component schema of the document, request and response side (docgen.Schemas).
//
//go:embed schemas.json
var schemasJSON string

// valueSchemas compiles the component schemas of schemasJSON on demand; loaded on first use, so a
// function that validates no such value pays nothing for it.
type valueSchemas struct {
	mu       sync.Mutex
	compiler *compiler
}

var loadValueSchemas = sync.OnceValues(func() (*valueSchemas, error) {
	sc := decode.NewScanner(schemasJSON)
	comps := &components{}
	err := sc.Object(func(key string) error {
		if key != "schemas" {
			_, err := sc.Skip()
			return err
		}
		var err error
		comps.Schemas, err = sc.RawMap()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("contract: schemas.json: %w", err)
	}
	return &valueSchemas{compiler: newCompiler(comps)}, nil
})

// ValidateJSON checks raw, one JSON value, against the document's component schema name (a response
// schema such as "TitlesResult" as well as a request one), with the rules and errors of a request body:
// strict decoding, then the schema. It returns the decoded value, defaults applied and UUIDs lower-cased.
// A model's output and a queue message are checked with it.
func ValidateJSON(name string, raw []byte) (any, error) {
	vs, err := loadValueSchemas()
	if err != nil {
		return nil, err
	}
	vs.mu.Lock()
	s, err := vs.compiler.ref("#/components/schemas/"+name, name)
	vs.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("contract: schema %s: %w", name, err)
	}
	if len(raw) == 0 {
		return nil, apperr.Invalid("body", "is required")
	}
	value, verr := decodeBody(raw)
	if verr != nil {
		return nil, verr
	}
	if verr := s.validate(value, nil); verr != nil {
		return nil, verr
	}
	s.normalize(value)
	return value, nil
}
