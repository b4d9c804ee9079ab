// Package api is the REST contract at run time: the embedded OpenAPI document, the operations it declares,
// and request validation derived from it.
//
// The document is written in openapi.yaml and converted to openapi.json by `go generate ./shared/api`;
// the JSON is embedded. Load decodes only what routing and validation need, and each operation compiles its
// validator the first time it is used, so a Lambda pays only for the operations it serves. kin-openapi and
// YAML parsing are used by the generator and the tests, never here.
package api

import (
	"bytes"
	_ "embed"
	"encoding/json"
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

// Document returns the OpenAPI document as served (JSON bytes, embedded). The caller owns the slice.
func Document() []byte { return []byte(document) }

// Contract is the set of operations of the document. It is safe for concurrent use.
type Contract struct {
	// Operations are in document order.
	Operations []*Operation
	byID       map[string]*Operation
}

// Operation is one operation of the document.
type Operation struct {
	ID       string // operationId
	Method   string // "GET", ...
	Path     string // e.g. "/api/v1/series/{id}" (ServeMux-compatible braces)
	Tag      string // e.g. "Planning"
	Function string // strings.ToLower(Tag), the Lambda serving it
	Public   bool   // security: []
	HasBody  bool   // the operation declares a requestBody
	// BodyRequired is the requestBody's required flag.
	BodyRequired bool
	// SuccessStatus is the lowest 2xx response code declared (200, 201, 204).
	SuccessStatus int

	src      opSource
	once     sync.Once
	compiled *validator
	err      error
}

// opSource is what an operation's validator is compiled from, kept undecoded until first use.
type opSource struct {
	comps      *components
	pathParams []json.RawMessage // declared on the path item
	opParams   []json.RawMessage // declared on the operation; they override the path item's
	bodySchema json.RawMessage   // the application/json schema of the request body, if any
}

type components struct {
	Schemas       map[string]json.RawMessage `json:"schemas"`
	Parameters    map[string]json.RawMessage `json:"parameters"`
	RequestBodies map[string]json.RawMessage `json:"requestBodies"`
}

// Load decodes the embedded document into a Contract (call once, keep it).
func Load() (*Contract, error) { return load([]byte(document)) }

// Operation returns the operation with the operationId id, nil if none.
func (c *Contract) Operation(id string) *Operation { return c.byID[id] }

var httpMethods = map[string]bool{
	"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true,
}

func load(doc []byte) (*Contract, error) {
	var raw struct {
		Security   *[]map[string][]string `json:"security"`
		Paths      orderedObject          `json:"paths"`
		Components components             `json:"components"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, fmt.Errorf("api: decode document: %w", err)
	}
	comps := &raw.Components
	c := &Contract{byID: make(map[string]*Operation)}
	for _, p := range raw.Paths {
		if !strings.HasPrefix(p.key, "/") {
			return nil, fmt.Errorf("api: path %q does not start with /", p.key)
		}
		var item orderedObject
		if err := json.Unmarshal(p.value, &item); err != nil {
			return nil, fmt.Errorf("api: path %s: %w", p.key, err)
		}
		var pathParams []json.RawMessage
		for _, m := range item {
			switch {
			case m.key == "parameters":
				if err := json.Unmarshal(m.value, &pathParams); err != nil {
					return nil, fmt.Errorf("api: path %s: parameters: %w", p.key, err)
				}
			case m.key == "$ref":
				return nil, fmt.Errorf("api: path %s: path item references are not supported", p.key)
			}
		}
		for _, m := range item {
			if !httpMethods[m.key] {
				continue
			}
			op, err := newOperation(p.key, m.key, m.value, raw.Security, comps, pathParams)
			if err != nil {
				return nil, fmt.Errorf("api: %s %s: %w", strings.ToUpper(m.key), p.key, err)
			}
			if c.byID[op.ID] != nil {
				return nil, fmt.Errorf("api: operationId %q is declared twice", op.ID)
			}
			c.byID[op.ID] = op
			c.Operations = append(c.Operations, op)
		}
	}
	return c, nil
}

func newOperation(path, method string, data json.RawMessage, global *[]map[string][]string, comps *components, pathParams []json.RawMessage) (*Operation, error) {
	var raw struct {
		OperationID string                     `json:"operationId"`
		Tags        []string                   `json:"tags"`
		Security    *[]map[string][]string     `json:"security"`
		Parameters  []json.RawMessage          `json:"parameters"`
		RequestBody json.RawMessage            `json:"requestBody"`
		Responses   map[string]json.RawMessage `json:"responses"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	if raw.OperationID == "" {
		return nil, errors.New("no operationId")
	}
	if len(raw.Tags) == 0 {
		return nil, fmt.Errorf("%s: no tag", raw.OperationID)
	}
	op := &Operation{
		ID:       raw.OperationID,
		Method:   strings.ToUpper(method),
		Path:     path,
		Tag:      raw.Tags[0],
		Function: strings.ToLower(raw.Tags[0]),
		src:      opSource{comps: comps, pathParams: pathParams, opParams: raw.Parameters},
	}

	security := global
	if raw.Security != nil {
		security = raw.Security
	}
	op.Public = security == nil || len(*security) == 0
	if security != nil {
		for _, req := range *security {
			// An empty requirement object means "no credential needed".
			if len(req) == 0 {
				op.Public = true
			}
		}
	}

	for code := range raw.Responses {
		status := 0
		if code == "2XX" {
			status = 200
		} else if n, err := strconv.Atoi(code); err == nil && n >= 200 && n <= 299 {
			status = n
		}
		if status != 0 && (op.SuccessStatus == 0 || status < op.SuccessStatus) {
			op.SuccessStatus = status
		}
	}
	if op.SuccessStatus == 0 {
		return nil, fmt.Errorf("%s: no 2xx response", op.ID)
	}

	if len(raw.RequestBody) > 0 && !bytes.Equal(raw.RequestBody, []byte("null")) {
		body, err := resolveRequestBody(raw.RequestBody, comps)
		if err != nil {
			return nil, fmt.Errorf("%s: requestBody: %w", op.ID, err)
		}
		op.HasBody = true
		op.BodyRequired = body.Required
		op.src.bodySchema = jsonSchemaOf(body.Content)
	}
	return op, nil
}

type requestBody struct {
	Required bool                       `json:"required"`
	Content  map[string]json.RawMessage `json:"content"`
}

func resolveRequestBody(data json.RawMessage, comps *components) (*requestBody, error) {
	var ref struct {
		Ref string `json:"$ref"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		return nil, err
	}
	if ref.Ref != "" {
		target, err := lookup(ref.Ref, "#/components/requestBodies/", comps.RequestBodies)
		if err != nil {
			return nil, err
		}
		data = target
	}
	var body requestBody
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, err
	}
	return &body, nil
}

// jsonSchemaOf returns the schema of the JSON media type of a content map: application/json itself, else
// the first (in name order) application/json variant or +json type.
func jsonSchemaOf(content map[string]json.RawMessage) json.RawMessage {
	names := make([]string, 0, len(content))
	for name := range content {
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
	if pick == "" {
		return nil
	}
	var media struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(content[pick], &media); err != nil {
		return nil
	}
	return media.Schema
}

// lookup resolves a local reference of the form prefix+name in one components map.
func lookup(ref, prefix string, in map[string]json.RawMessage) (json.RawMessage, error) {
	name, ok := strings.CutPrefix(ref, prefix)
	if !ok {
		return nil, fmt.Errorf("reference %q: only %s* references are supported here", ref, prefix)
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	target, ok := in[name]
	if !ok {
		return nil, fmt.Errorf("reference %q: no such component", ref)
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

// orderedObject is a JSON object whose members keep their document order.
type orderedObject []member

type member struct {
	key   string
	value json.RawMessage
}

func (o *orderedObject) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return errors.New("expected an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var m member
		m.key, _ = tok.(string)
		if err := dec.Decode(&m.value); err != nil {
			return err
		}
		*o = append(*o, m)
	}
	return nil
}
