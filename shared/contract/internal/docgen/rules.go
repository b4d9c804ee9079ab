package docgen

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Rules the validator enforces in code (x-css-text in text.go, the date range in format.go) that a pattern
// can also say, so generated clients and fuzzers that trust the schema know them: Generate adds them to the
// served document only. The runtime document leaves them out, as the validator already checks them without
// compiling dozens of regexps at a cold start. Each is written so Go's regexp, ECMA-262 (without the u flag)
// and Python's re read it alike: \xHH for the C0 and C1 controls, literal runes for the rest (Go has no \u).
const (
	// refusedInText are the characters no free text holds but the tab, newline and carriage return: C0 and
	// C1 controls, the bidirectional overrides and isolates, and the BMP noncharacters.
	refusedInText = `\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f` + "\u202a-\u202e\u2066-\u2069\ufdd0-\ufdef\ufffe\uffff"
	// TextLinePattern is x-css-text "line": none of those, nor a tab or a line break.
	TextLinePattern = `^[^\t\n\r` + refusedInText + `]*$`
	// TextLongPattern is x-css-text "long": tabs and line breaks too, a carriage return only in a CRLF.
	TextLongPattern = `^(?:[^\r` + refusedInText + `]|\r\n)*$`
	// DatePattern is format: date from 1900-01-01 to 9999-12-24.
	DatePattern = `^(?:(?:19|[2-8][0-9])[0-9]{2}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$` +
		`|^9999-(?:0[1-9]|1[01])-(?:0[1-9]|[12][0-9]|3[01])$|^9999-12-(?:0[1-9]|1[0-9]|2[0-4])$`
)

// withRules returns src (OpenAPI YAML) with a pattern on every x-css-text string and every format: date
// string. A schema that has a pattern of its own is refused: it could not hold both.
func withRules(src []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	if err := addRules(&root); err != nil {
		return nil, err
	}
	return yaml.Marshal(&root)
}

func addRules(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		pattern := ""
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch k, v := n.Content[i].Value, n.Content[i+1]; {
			case k == "x-css-text" && v.Value == "line":
				pattern = TextLinePattern
			case k == "x-css-text" && v.Value == "long":
				pattern = TextLongPattern
			case k == "format" && v.Value == "date":
				pattern = DatePattern
			}
		}
		if pattern != "" {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "pattern" {
					return fmt.Errorf("line %d: a schema with x-css-text or format: date has a pattern of its own", n.Line)
				}
			}
			n.Content = append(n.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "pattern"},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: pattern})
		}
	}
	for _, c := range n.Content {
		if err := addRules(c); err != nil {
			return err
		}
	}
	return nil
}
