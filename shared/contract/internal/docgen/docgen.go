// Package docgen turns the OpenAPI YAML document into the JSON document the service embeds and serves.
// It runs at `go generate` time and in tests, never in a Lambda: kin-openapi and YAML parsing stay out of
// the cold start.
package docgen

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"
)

// Runtime returns the part of the document (src, OpenAPI 3.0 YAML) that routing and request validation
// read, as compact JSON: paths with their operations and parameters, the response codes (not the response
// bodies), and the components schemas, parameters and requestBodies, without the words written for people
// (description, summary, example, examples, externalDocs). The served document stays whole; this smaller
// one is what the generator writes as static data (static_gen.go), what Load returns. Run it on a document
// Generate accepts.
func Runtime(src []byte) ([]byte, error) {
	top, err := topMapping(src)
	if err != nil {
		return nil, err
	}
	if err := stripRegistry(top); err != nil {
		return nil, err
	}
	var keys []string
	values := map[string]*yaml.Node{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		switch k, v := top.Content[i].Value, top.Content[i+1]; k {
		case "openapi", "security":
			keys, values[k] = append(keys, k), v
		case "paths":
			keys, values[k] = append(keys, k), pruned(v, true)
		case "components":
			keys, values[k] = append(keys, k), pruned(only(v, "schemas", "parameters", "requestBodies"), false)
		}
	}
	if values["components"] != nil && values["paths"] != nil {
		values["components"] = reachable(values["components"], values["paths"])
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			out.WriteByte(',')
		}
		writeString(&out, k)
		out.WriteByte(':')
		if err := writeJSON(&out, values[k]); err != nil {
			return nil, err
		}
	}
	out.WriteString("}\n")
	return out.Bytes(), nil
}

// topMapping parses src and returns its one top-level mapping.
func topMapping(src []byte) (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("expected one YAML document holding a mapping")
	}
	return root.Content[0], nil
}

// Schemas returns every component schema of the document (src, OpenAPI 3.0 YAML), request and response
// side, as compact JSON {"schemas":{...}} without the words written for people: what a value other than a
// request (a model's output, a queue message) is validated against.
func Schemas(src []byte) ([]byte, error) {
	top, err := topMapping(src)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteString(`{"schemas":`)
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "components" {
			continue
		}
		comps := only(top.Content[i+1], "schemas")
		if len(comps.Content) == 2 {
			if err := writeJSON(&out, pruned(comps.Content[1], true)); err != nil {
				return nil, err
			}
			out.WriteString("}\n")
			return out.Bytes(), nil
		}
	}
	return nil, errors.New("the document has no components.schemas")
}

// reachable returns the components (a mapping of kind -> name -> object) that from refers to, directly or
// through other components; the schemas only responses use are left out.
func reachable(components, from *yaml.Node) *yaml.Node {
	const prefix = "#/components/"
	byRef := map[string]*yaml.Node{}
	for i := 0; i+1 < len(components.Content); i += 2 {
		kind := components.Content[i].Value
		m := components.Content[i+1]
		for j := 0; j+1 < len(m.Content); j += 2 {
			byRef[prefix+kind+"/"+m.Content[j].Value] = m.Content[j+1]
		}
	}
	used := map[string]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 && c.Value == "$ref" && i+1 < len(n.Content) {
				ref := n.Content[i+1].Value
				if target := byRef[ref]; target != nil && !used[ref] {
					used[ref] = true
					walk(target)
				}
			}
			walk(c)
		}
	}
	walk(from)
	out := *components
	out.Content = nil
	for i := 0; i+1 < len(components.Content); i += 2 {
		kind := components.Content[i]
		m := *components.Content[i+1]
		m.Content = nil
		src := components.Content[i+1].Content
		for j := 0; j+1 < len(src); j += 2 {
			if used[prefix+kind.Value+"/"+src[j].Value] {
				m.Content = append(m.Content, src[j], src[j+1])
			}
		}
		out.Content = append(out.Content, kind, &m)
	}
	return &out
}

// docOnly are the keywords written for people; nothing at run time reads them. An operation's callbacks
// (the webhook deliveries the service sends) are among them: routing and validation read only what the
// service receives.
var docOnly = map[string]bool{"description": true, "summary": true, "example": true, "examples": true, "externalDocs": true,
	"callbacks": true}

// nameMaps are the keywords whose value maps names (properties, paths, media types, codes, components) to
// objects: their keys are never keywords, so a property called "description" stays.
var nameMaps = map[string]bool{
	"properties": true, "paths": true, "schemas": true, "parameters": true, "requestBodies": true,
	"responses": true, "content": true, "headers": true, "securitySchemes": true,
}

// pruned returns a copy of n without docOnly keywords, and with each response reduced to {} (only the
// codes matter at run time). names says n's keys are names rather than keywords.
func pruned(n *yaml.Node, names bool) *yaml.Node {
	switch n.Kind {
	case yaml.AliasNode:
		return pruned(n.Alias, names)
	case yaml.SequenceNode:
		c := *n
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, e := range n.Content {
			c.Content[i] = pruned(e, false)
		}
		return &c
	case yaml.MappingNode:
		c := *n
		c.Content = nil
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch {
			case names:
				v = pruned(v, false)
			case docOnly[k.Value]:
				continue
			case k.Value == "responses" && v.Kind == yaml.MappingNode:
				v = emptied(v)
			default:
				v = pruned(v, nameMaps[k.Value])
			}
			c.Content = append(c.Content, k, v)
		}
		return &c
	}
	return n
}

// emptied returns a copy of the mapping n with every value replaced by an empty mapping.
func emptied(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		c.Content = append(c.Content, n.Content[i], &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"})
	}
	return &c
}

// only returns a copy of the mapping n with just the given keys.
func only(n *yaml.Node, keys ...string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	c := *n
	c.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		for _, k := range keys {
			if n.Content[i].Value == k {
				c.Content = append(c.Content, n.Content[i], n.Content[i+1])
			}
		}
	}
	return &c
}

// Generate validates the OpenAPI 3.0 YAML document src and returns it as compact JSON (object keys in YAML
// order, ending in a newline, without the registry extensions: see Registry; with the patterns of rules.go):
// the YAML is the readable form, and every byte of the JSON is paid for in each cold start that loads it and
// each response that serves it. The output depends only on src.
func Generate(ctx context.Context, src []byte) ([]byte, error) {
	src, err := withRules(src)
	if err != nil {
		return nil, err
	}
	doc, err := loadValid(ctx, src)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		return nil, fmt.Errorf("openapi %q: only OpenAPI 3.0.x documents are supported", doc.OpenAPI)
	}

	top, err := topMapping(src)
	if err != nil {
		return nil, err
	}
	if err := stripRegistry(top); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := writeJSON(&out, top); err != nil {
		return nil, err
	}
	out.WriteByte('\n')

	// The conversion is only trusted when kin-openapi reads the same document back from the JSON.
	back, err := loadValid(ctx, out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated JSON: %w", err)
	}
	stripRegistryExtensions(doc)
	want, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("marshal YAML document: %w", err)
	}
	got, err := json.Marshal(back)
	if err != nil {
		return nil, fmt.Errorf("marshal JSON document: %w", err)
	}
	if !bytes.Equal(want, got) {
		return nil, errors.New("generated JSON does not describe the same document as the YAML")
	}
	return out.Bytes(), nil
}

// Gzip returns doc compressed as the gzip stream the service sends to clients whose Accept-Encoding allows
// it: best compression, done once here rather than in a cold start, and with no name or modification time
// in the header, so the same doc gives the same bytes with the same Go release. (Another release of
// compress/flate may choose other bytes for the same doc; what must hold is that they decompress to doc.)
func Gzip(doc []byte) ([]byte, error) {
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(doc); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func loadValid(ctx context.Context, data []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI document: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("invalid OpenAPI document: %w", err)
	}
	return doc, nil
}

// writeJSON writes n as compact JSON, keeping mapping keys in document order.
func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: expected one YAML document", n.Line)
		}
		return writeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: mapping keys must be scalars", k.Line)
			}
			if k.Tag == "!!merge" {
				return fmt.Errorf("line %d: YAML merge keys are not supported", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k.Value)
			buf.WriteByte(':')
			if err := writeJSON(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	}
	return fmt.Errorf("line %d: unsupported YAML node kind %d", n.Line, n.Kind)
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int", "!!float":
		// Keep the author's spelling when it is already a JSON number (1.0 stays 1.0).
		if isJSONNumber(n.Value) {
			buf.WriteString(n.Value)
			return nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("line %d: %q has no JSON representation", n.Line, n.Value)
		}
		buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	case "!!str", "!!timestamp", "!!binary":
		// Timestamps stay the strings they were written as: OpenAPI examples of dates are strings.
		writeString(buf, n.Value)
	default:
		return fmt.Errorf("line %d: unsupported YAML tag %s", n.Line, n.Tag)
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	buf.Truncate(buf.Len() - 1)
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func isJSONNumber(s string) bool { return jsonNumber.MatchString(s) }
