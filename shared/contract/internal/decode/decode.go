// Package decode reads the operations and raw components of an OpenAPI document (contract.json, the served
// document, or a test's) into plain data. The contract package turns that data into its Contract when it
// loads a document at run time (LoadDocument, tests), and the generator writes the same data for
// contract.json as Go (static_gen.go), so that Load decodes nothing: both go through Decode, so they cannot
// disagree on what a document declares.
package decode

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The values of x-css-credential and x-css-rate-group (the contract package's Credential and RateGroup
// constants are these).
const (
	CredentialNone    = "none"
	CredentialChannel = "channel"
	CredentialSession = "session"
	RateGeneration    = "generation"
	RateOther         = "other"
)

// Raw is one member of a components map, its value kept as raw JSON until an operation needs it.
type Raw struct {
	Name string
	JSON string
}

// Set is a components map sorted by name: a lookup is a binary search, and, unlike a map, a Set can be
// written as static data the linker lays out, with no code run at init.
type Set []Raw

// Get returns the raw value named name.
func (s Set) Get(name string) (string, bool) {
	i := sort.Search(len(s), func(i int) bool { return s[i].Name >= name })
	if i < len(s) && s[i].Name == name {
		return s[i].JSON, true
	}
	return "", false
}

// sorted sorts s by name, keeping the last of members with the same name.
func (s Set) sorted() Set {
	sort.SliceStable(s, func(i, j int) bool { return s[i].Name < s[j].Name })
	out := s[:0]
	for i, r := range s {
		if i+1 < len(s) && s[i+1].Name == r.Name {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Components holds the raw components an operation may reference.
type Components struct {
	Schemas, Parameters, RequestBodies Set
}

// Lookup resolves a local reference of the form prefix+name in one Set.
func Lookup(ref, prefix string, in Set) (string, error) {
	name, ok := strings.CutPrefix(ref, prefix)
	if !ok {
		return "", fmt.Errorf("reference %q: only %s* references are supported here", ref, prefix)
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	target, ok := in.Get(name)
	if !ok {
		return "", fmt.Errorf("reference %q: no such component", ref)
	}
	return target, nil
}

// Operation is one operation of a document, checked, with the document's global security applied and
// its request body resolved to the JSON schema of its JSON media type.
type Operation struct {
	ID, Method, Path, Tag      string // Method upper-case
	Function                   string
	Credential, RateGroup      string
	Public                     bool
	HasBody, BodyRequired      bool
	SuccessStatus              int
	PathParams, Params         []string // raw parameters of the path item and of the operation
	BodySchema                 string   // raw schema of the body, "" when none
	hasSecurity, publicOwnRule bool
	requestBody                string
}

// Contract is what a document declares: its operations in document order, and its components.
type Contract struct {
	Operations []Operation
	Components Components
}

// isMethod reports whether a path item's key names an operation (a switch, not a map: no init work).
func isMethod(key string) bool {
	switch key {
	case "get", "put", "post", "delete", "options", "head", "patch", "trace":
		return true
	}
	return false
}

// Decode reads doc, a JSON OpenAPI document, and checks every operation (operationId, tag, a 2xx
// response, the x-css extensions).
func Decode(doc string) (*Contract, error) {
	sc := NewScanner(doc)
	c := &Contract{}
	var raws []*Operation
	// Without a top-level security, an operation without its own would be public: make none so by default.
	globalPublic := false
	err := sc.Object(func(key string) error {
		var err error
		switch key {
		case "security":
			globalPublic, err = sc.Security()
		case "paths":
			raws, err = scanPaths(sc)
		case "components":
			err = sc.Object(func(key string) error {
				var err error
				switch key {
				case "schemas":
					c.Components.Schemas, err = sc.RawMap()
				case "parameters":
					c.Components.Parameters, err = sc.RawMap()
				case "requestBodies":
					c.Components.RequestBodies, err = sc.RawMap()
				default:
					_, err = sc.Skip()
				}
				return err
			})
		default:
			_, err = sc.Skip()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("api: decode document: %w", err)
	}

	seen := make(map[string]bool, len(raws))
	c.Operations = make([]Operation, 0, len(raws))
	for _, op := range raws {
		if err := op.finish(globalPublic, &c.Components); err != nil {
			return nil, fmt.Errorf("api: %s %s: %w", op.Method, op.Path, err)
		}
		if seen[op.ID] {
			return nil, fmt.Errorf("api: operationId %q is declared twice", op.ID)
		}
		seen[op.ID] = true
		c.Operations = append(c.Operations, *op)
	}
	return c, nil
}

func scanPaths(sc *Scanner) ([]*Operation, error) {
	var ops []*Operation
	err := sc.Object(func(path string) error {
		if !strings.HasPrefix(path, "/") {
			return fmt.Errorf("path %q does not start with /", path)
		}
		var pathParams []string
		var item []*Operation
		err := sc.Object(func(key string) error {
			switch key {
			case "parameters":
				var err error
				pathParams, err = sc.RawList()
				return err
			case "$ref":
				return fmt.Errorf("path %s: path item references are not supported", path)
			}
			if !isMethod(key) {
				_, err := sc.Skip()
				return err
			}
			op, err := scanOperation(sc)
			if err != nil {
				return fmt.Errorf("%s %s: %w", strings.ToUpper(key), path, err)
			}
			op.Path, op.Method = path, strings.ToUpper(key)
			item = append(item, op)
			return nil
		})
		// Path-item parameters may follow the operations in the document.
		for _, op := range item {
			op.PathParams = pathParams
		}
		ops = append(ops, item...)
		return err
	})
	return ops, err
}

func scanOperation(sc *Scanner) (*Operation, error) {
	op := &Operation{}
	err := sc.Object(func(key string) error {
		var err error
		switch key {
		case "operationId":
			op.ID, err = sc.Str()
		case "tags":
			err = sc.Array(func() error {
				tag, err := sc.Str()
				if op.Tag == "" {
					op.Tag = tag
				}
				return err
			})
		case "security":
			op.hasSecurity = true
			op.publicOwnRule, err = sc.Security()
		case "x-css-function":
			op.Function, err = sc.Str()
		case "x-css-credential":
			op.Credential, err = sc.Str()
		case "x-css-rate-group":
			op.RateGroup, err = sc.Str()
		case "parameters":
			op.Params, err = sc.RawList()
		case "requestBody":
			op.requestBody, err = sc.Skip()
		case "responses":
			err = sc.Object(func(code string) error {
				// Atoi's n is 0, or out of this range, whenever it fails.
				status := 0
				if code == "2XX" {
					status = 200
				} else if n, _ := strconv.Atoi(code); n >= 200 && n <= 299 {
					status = n
				}
				if status != 0 && (op.SuccessStatus == 0 || status < op.SuccessStatus) {
					op.SuccessStatus = status
				}
				_, err := sc.Skip()
				return err
			})
		default:
			_, err = sc.Skip()
		}
		return err
	})
	return op, err
}

// finish checks a scanned operation, applies the global security and resolves its request body.
func (op *Operation) finish(globalPublic bool, comps *Components) error {
	if op.ID == "" {
		return errors.New("no operationId")
	}
	if op.Tag == "" {
		return fmt.Errorf("%s: no tag", op.ID)
	}
	if op.SuccessStatus == 0 {
		return fmt.Errorf("%s: no 2xx response", op.ID)
	}
	op.Public = globalPublic
	if op.hasSecurity {
		op.Public = op.publicOwnRule
	}
	if err := op.checkExtensions(); err != nil {
		return fmt.Errorf("%s: %w", op.ID, err)
	}
	if op.requestBody != "" && op.requestBody != "null" {
		body, err := resolveRequestBody(op.requestBody, comps)
		if err != nil {
			return fmt.Errorf("%s: requestBody: %w", op.ID, err)
		}
		op.HasBody = true
		op.BodyRequired = body.required
		op.BodySchema = body.jsonSchema()
	}
	// What was scanned only to get here is not part of the result (nor of the static contract).
	op.hasSecurity, op.publicOwnRule, op.requestBody = false, false, ""
	return nil
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

func resolveRequestBody(raw string, comps *Components) (*requestBody, error) {
	body := &requestBody{schemas: map[string]string{}}
	ref := ""
	sc := NewScanner(raw)
	err := sc.Object(func(key string) error {
		var err error
		switch key {
		case "$ref":
			ref, err = sc.Str()
		case "required":
			var v string
			v, err = sc.Skip()
			body.required = v == "true"
		case "content":
			err = sc.Object(func(media string) error {
				return sc.Object(func(key string) error {
					if key != "schema" {
						_, err := sc.Skip()
						return err
					}
					schema, err := sc.Skip()
					body.schemas[media] = schema
					return err
				})
			})
		default:
			_, err = sc.Skip()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if ref != "" {
		// OpenAPI 3.0: the siblings of a $ref are ignored.
		target, err := Lookup(ref, "#/components/requestBodies/", comps.RequestBodies)
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
