// Package docgen turns the OpenAPI YAML document into the JSON document the service embeds and serves.
// It runs at `go generate` time and in tests, never in a Lambda: kin-openapi and YAML parsing stay out of
// the cold start.
package docgen

import (
	"bytes"
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

// Generate validates the OpenAPI 3.0 YAML document src and returns it as compact JSON (object keys in YAML
// order, ending in a newline): the YAML is the readable form, and every byte of the JSON is paid for in
// each cold start that loads it and each response that serves it. The output depends only on src.
func Generate(ctx context.Context, src []byte) ([]byte, error) {
	doc, err := loadValid(ctx, src)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		return nil, fmt.Errorf("openapi %q: only OpenAPI 3.0.x documents are supported", doc.OpenAPI)
	}

	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	var out bytes.Buffer
	if err := writeJSON(&out, &root); err != nil {
		return nil, err
	}
	out.WriteByte('\n')

	// The conversion is only trusted when kin-openapi reads the same document back from the JSON.
	back, err := loadValid(ctx, out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("generated JSON: %w", err)
	}
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
