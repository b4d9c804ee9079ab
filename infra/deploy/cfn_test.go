package deploy

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A CloudFormation template read into plain values: maps, slices and strings (numbers and booleans stay
// the strings they were written as). Short-form intrinsics become their long form, so
// `!GetAtt Table.Arn` reads as map{"Fn::GetAtt": [Table Arn]} and `!Ref X` as map{"Ref": X}.

func readTemplate(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the template: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	v, err := cfnValue(&doc)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: not a mapping", path)
	}
	return m
}

func cfnValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, fmt.Errorf("line %d: want one document", n.Line)
		}
		return cfnValue(n.Content[0])
	case yaml.AliasNode:
		return cfnValue(n.Alias)
	}
	var v any
	switch n.Kind {
	case yaml.ScalarNode:
		v = n.Value
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			cv, err := cfnValue(c)
			if err != nil {
				return nil, err
			}
			s = append(s, cv)
		}
		v = s
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("line %d: key %q twice", n.Content[i].Line, k)
			}
			cv, err := cfnValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k] = cv
		}
		v = m
	default:
		return nil, fmt.Errorf("line %d: unexpected YAML node kind %d", n.Line, n.Kind)
	}
	return intrinsic(n, v)
}

// intrinsic turns a short-form tagged value into its long form; untagged values pass through.
func intrinsic(n *yaml.Node, v any) (any, error) {
	tag := n.Tag
	if !strings.HasPrefix(tag, "!") || strings.HasPrefix(tag, "!!") {
		return v, nil
	}
	name := strings.TrimPrefix(tag, "!")
	switch name {
	case "Ref", "Condition":
		return map[string]any{name: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok {
			res, attr, ok := strings.Cut(s, ".")
			if !ok {
				return nil, fmt.Errorf("line %d: !GetAtt %q: want Resource.Attribute", n.Line, s)
			}
			v = []any{res, attr}
		}
		return map[string]any{"Fn::GetAtt": v}, nil
	case "Sub", "If", "Equals", "Not", "And", "Or", "Join", "Select", "Split", "FindInMap", "Base64",
		"Cidr", "GetAZs", "ImportValue", "Transform", "Length", "ToJsonString":
		return map[string]any{"Fn::" + name: v}, nil
	}
	return nil, fmt.Errorf("line %d: unknown tag %s", n.Line, tag)
}

// at walks v along keys (map keys, or indexes written as decimal strings into slices); nil when absent.
func at(v any, keys ...string) any {
	for _, k := range keys {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// strs reads a string or a list of strings (IAM's Action and Resource take either).
func strs(v any) []string {
	switch c := v.(type) {
	case string:
		return []string{c}
	case []any:
		out := make([]string, 0, len(c))
		for _, e := range c {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

func isRef(v any, name string) bool { return str(at(v, "Ref")) == name }

func isGetAtt(v any, res, attr string) bool {
	ga := at(v, "Fn::GetAtt")
	return str(at(ga, "0")) == res && str(at(ga, "1")) == attr
}

func TestCfnValueReadsShortFormIntrinsics(t *testing.T) {
	src := `
A: !Ref Table
B: !GetAtt Table.Arn
C: !Sub /aws/lambda/${Fn}
D: !If [Cond, !Ref X, !Ref AWS::NoValue]
E: &anchor {k: v}
F: *anchor
G: [1, "two"]
`
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	v, err := cfnValue(&doc)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"Ref", isRef(at(v, "A"), "Table")},
		{"GetAtt", isGetAtt(at(v, "B"), "Table", "Arn")},
		{"Sub", str(at(v, "C", "Fn::Sub")) == "/aws/lambda/${Fn}"},
		{"If", str(at(v, "D", "Fn::If", "0")) == "Cond" && isRef(at(v, "D", "Fn::If", "2"), "AWS::NoValue")},
		{"alias", str(at(v, "F", "k")) == "v"},
		{"sequence", str(at(v, "G", "0")) == "1" && str(at(v, "G", "1")) == "two"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not read as expected: %#v", c.name, v)
		}
	}

	for _, bad := range []string{"A: !Bogus x", "A: !GetAtt NoDot", "A: 1\nA: 2"} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(bad), &doc); err != nil {
			continue // yaml.v3 may refuse it itself; either way it is refused
		}
		if _, err := cfnValue(&doc); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
