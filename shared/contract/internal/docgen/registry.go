package docgen

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"
)

// registryOnly are the operation extensions the generator turns into Go (registry_gen.go) rather than
// serving: what runs an operation as a generation job and which MCP tool mirrors it. Clients see the
// document as before they existed.
var registryOnly = []string{"x-css-tool", "x-css-legacy-tool", "x-css-mcp"}

// Registration is what one operation's registry extensions say, with the components its generated
// accessors need.
type Registration struct {
	Operation string // operationId
	// Tool (x-css-tool) names the generation tool that runs the operation as a job; "" when it is not one.
	Tool string
	// Legacy (x-css-legacy-tool) is the `tool` of the unversioned POST /api/generate mapped to it.
	Legacy string
	// Body and Result are the components of a generation's request body and 200 response.
	Body, Result string
	// BodyOptional: the request body is not required (its input holds a pointer).
	BodyOptional bool
	Mirror       *Mirror // x-css-mcp
}

// Mirror is an MCP tool that runs the operation (x-css-mcp).
type Mirror struct {
	Name        string `yaml:"name"`
	Position    int    `yaml:"position"`
	Title       string `yaml:"title"`
	Kind        string `yaml:"kind"`
	Description string `yaml:"description"`
	// Summary is a style, with its argument: "profile", "schedule", {list: field, noun: item},
	// {generated: what}, {text: sentence}, {video: verb}.
	Summary MirrorSummary `yaml:"-"`
}

// MirrorSummary picks the line an MCP tool writes before its JSON.
type MirrorSummary struct {
	Style string // profile, schedule, list, generated, text, video
	Arg   string // list: the items' field; generated: what; text: the sentence; video: the verb
	Noun  string // list: what one item is called
}

var (
	mirrorKinds   = []string{"read", "generate", "write", "replace", "remove"}
	toolName      = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	summaryStyles = map[string]bool{"list": true, "generated": true, "text": true, "video": true}
)

// Registry returns the registrations of the document's operations (src, OpenAPI 3.0 YAML) that carry a
// registry extension, in document order, checked: tools, legacy tools, MCP names and positions are unique,
// positions run from 1 without a gap, and a generation has a JSON body and a 200 body of components.
func Registry(src []byte) ([]Registration, error) {
	top, err := topMapping(src)
	if err != nil {
		return nil, err
	}
	var regs []Registration
	err = eachOperation(top, func(_, _ string, op *yaml.Node) error {
		r, err := registration(op)
		if err != nil || r == nil {
			return err
		}
		regs = append(regs, *r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return regs, checkRegistry(regs)
}

// eachOperation calls fn with each operation of the document's paths, in document order.
func eachOperation(top *yaml.Node, fn func(path, method string, op *yaml.Node) error) error {
	paths := value(top, "paths")
	if paths == nil || paths.Kind != yaml.MappingNode {
		return errors.New("the document has no paths")
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		item := paths.Content[i+1]
		if item.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			method := item.Content[j].Value
			if !slices.Contains([]string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}, method) {
				continue
			}
			if err := fn(paths.Content[i].Value, method, item.Content[j+1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// value returns the value of key in the mapping n, nil when absent.
func value(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// jsonSchemaRef returns the component a JSON content's schema refers to ("" when inline or absent).
func jsonSchemaRef(n *yaml.Node) string {
	ref := value(value(value(value(n, "content"), "application/json"), "schema"), "$ref")
	if ref == nil {
		return ""
	}
	name, _ := strings.CutPrefix(ref.Value, "#/components/schemas/")
	return name
}

func registration(op *yaml.Node) (*Registration, error) {
	id := value(op, "operationId")
	if id == nil {
		return nil, errors.New("an operation without operationId")
	}
	r := &Registration{Operation: id.Value}
	scalar := func(key string) (string, error) {
		n := value(op, key)
		if n == nil {
			return "", nil
		}
		if n.Kind != yaml.ScalarNode || !toolName.MatchString(n.Value) {
			return "", fmt.Errorf("%s: %s: want a lower-case name", r.Operation, key)
		}
		return n.Value, nil
	}
	var err error
	if r.Tool, err = scalar("x-css-tool"); err != nil {
		return nil, err
	}
	if r.Legacy, err = scalar("x-css-legacy-tool"); err != nil {
		return nil, err
	}
	if r.Legacy != "" && r.Tool == "" {
		return nil, fmt.Errorf("%s: x-css-legacy-tool without x-css-tool", r.Operation)
	}
	if r.Tool != "" {
		body := value(op, "requestBody")
		r.Body = jsonSchemaRef(body)
		r.BodyOptional = value(body, "required") == nil || value(body, "required").Value != "true"
		r.Result = jsonSchemaRef(value(value(op, "responses"), "200"))
		if r.Body == "" || r.Result == "" {
			return nil, fmt.Errorf("%s: x-css-tool: a generation takes a JSON body and answers 200 with one, each a component", r.Operation)
		}
	}
	if n := value(op, "x-css-mcp"); n != nil {
		if r.Mirror, err = mirror(n); err != nil {
			return nil, fmt.Errorf("%s: x-css-mcp: %w", r.Operation, err)
		}
	}
	if r.Tool == "" && r.Mirror == nil {
		return nil, nil
	}
	return r, nil
}

func mirror(n *yaml.Node) (*Mirror, error) {
	if n.Kind != yaml.MappingNode {
		return nil, errors.New("want a mapping")
	}
	known := []string{"name", "position", "title", "kind", "summary", "description"}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !slices.Contains(known, n.Content[i].Value) {
			return nil, fmt.Errorf("unknown key %q (want %s)", n.Content[i].Value, strings.Join(known, ", "))
		}
	}
	m := &Mirror{}
	err := n.Decode(m)
	if err != nil {
		return nil, err
	}
	switch {
	case !toolName.MatchString(m.Name):
		return nil, fmt.Errorf("name %q: want a lower-case name", m.Name)
	case m.Position < 1:
		return nil, errors.New("position: want 1 or more")
	case m.Title == "" || m.Description == "":
		return nil, errors.New("a title and a description are required")
	case !slices.Contains(mirrorKinds, m.Kind):
		return nil, fmt.Errorf("kind %q: want one of %s", m.Kind, strings.Join(mirrorKinds, ", "))
	}
	if m.Summary, err = summary(value(n, "summary")); err != nil {
		return nil, err
	}
	return m, nil
}

// summary reads a mirror's summary: profile or schedule, or a mapping whose first key is the style and
// its value the argument ({list: field, noun: item} also names one item).
func summary(n *yaml.Node) (MirrorSummary, error) {
	const want = "summary: want profile, schedule, {list: field, noun: item}, {generated: what}, {text: sentence} or {video: verb}"
	switch {
	case n == nil:
		return MirrorSummary{}, errors.New("a summary is required")
	case n.Kind == yaml.ScalarNode && (n.Value == "profile" || n.Value == "schedule"):
		return MirrorSummary{Style: n.Value}, nil
	case n.Kind != yaml.MappingNode || len(n.Content) < 2 || !summaryStyles[n.Content[0].Value]:
		return MirrorSummary{}, errors.New(want)
	}
	s := MirrorSummary{Style: n.Content[0].Value, Arg: n.Content[1].Value}
	keys := 1
	if s.Style == "list" {
		if noun := value(n, "noun"); noun != nil {
			s.Noun = noun.Value
		}
		if s.Noun == "" {
			return s, errors.New("summary list: want {list: field, noun: item} with noun")
		}
		keys = 2
	}
	if len(n.Content) != 2*keys || s.Arg == "" {
		return s, errors.New(want)
	}
	return s, nil
}

func checkRegistry(regs []Registration) error {
	tools, legacy, names, positions := map[string]string{}, map[string]string{}, map[string]string{}, map[int]string{}
	claim := func(seen map[string]string, what, key, op string) error {
		if key == "" {
			return nil
		}
		if prev, ok := seen[key]; ok {
			return fmt.Errorf("%s %s: on %s and %s", what, key, prev, op)
		}
		seen[key] = op
		return nil
	}
	for _, r := range regs {
		if err := errors.Join(claim(tools, "x-css-tool", r.Tool, r.Operation), claim(legacy, "x-css-legacy-tool", r.Legacy, r.Operation)); err != nil {
			return err
		}
		if r.Mirror == nil {
			continue
		}
		if err := claim(names, "x-css-mcp name", r.Mirror.Name, r.Operation); err != nil {
			return err
		}
		if prev, ok := positions[r.Mirror.Position]; ok {
			return fmt.Errorf("x-css-mcp position %d: on %s and %s", r.Mirror.Position, prev, r.Operation)
		}
		positions[r.Mirror.Position] = r.Operation
	}
	for p := 1; p <= len(positions); p++ {
		if _, ok := positions[p]; !ok {
			return fmt.Errorf("x-css-mcp positions run from 1 to %d without a gap: %d is missing", len(positions), p)
		}
	}
	return nil
}

// stripRegistry removes the registry extensions from every operation of the document top (a YAML
// mapping node, changed in place).
func stripRegistry(top *yaml.Node) error {
	if value(top, "paths") == nil {
		return nil
	}
	return eachOperation(top, func(_, _ string, op *yaml.Node) error {
		kept := op.Content[:0:0]
		for i := 0; i+1 < len(op.Content); i += 2 {
			if !slices.Contains(registryOnly, op.Content[i].Value) {
				kept = append(kept, op.Content[i], op.Content[i+1])
			}
		}
		op.Content = kept
		return nil
	})
}

// stripRegistryExtensions removes the registry extensions from the operations of a loaded document.
func stripRegistryExtensions(doc *openapi3.T) {
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, k := range registryOnly {
				delete(op.Extensions, k)
			}
		}
	}
}
