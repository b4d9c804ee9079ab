package docgen

import (
	"strings"
	"testing"
)

func TestRegistryRefusesWhatDisagrees(t *testing.T) {
	op := func(id, ext string) string {
		return "    post:\n      operationId: " + id + "\n" + ext +
			"      requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/B'}}}}\n" +
			"      responses: {'200': {content: {application/json: {schema: {$ref: '#/components/schemas/R'}}}}}\n"
	}
	mcp := func(name, pos string) string {
		return "      x-css-mcp: {name: " + name + ", position: " + pos + ", title: T, kind: read, summary: profile, description: D}\n"
	}
	doc := func(ops ...string) string {
		s := "paths:\n"
		for i, o := range ops {
			s += "  /p" + string(rune('a'+i)) + ":\n" + o
		}
		return s
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"same tool twice", doc(op("a", "      x-css-tool: t\n"), op("b", "      x-css-tool: t\n")), "x-css-tool t: on a and b"},
		{"legacy without tool", doc(op("a", "      x-css-legacy-tool: t\n")), "without x-css-tool"},
		{"same mirror name", doc(op("a", mcp("n", "1")), op("b", mcp("n", "2"))), "x-css-mcp name n"},
		{"same position", doc(op("a", mcp("n", "1")), op("b", mcp("m", "1"))), "position 1"},
		{"a gap", doc(op("a", mcp("n", "2"))), "1 is missing"},
		{"unknown kind", doc(op("a", strings.Replace(mcp("n", "1"), "read", "peek", 1))), `kind "peek"`},
		{"unknown key", doc(op("a", strings.Replace(mcp("n", "1"), "title", "heading", 1))), `unknown key "heading"`},
		{"unknown summary", doc(op("a", strings.Replace(mcp("n", "1"), "profile", "{count: x}", 1))), "summary"},
		{"list without noun", doc(op("a", strings.Replace(mcp("n", "1"), "profile", "{list: x}", 1))), "with noun"},
		{"tool name", doc(op("a", "      x-css-tool: Titles\n")), "lower-case"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Registry([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	regs, err := Registry([]byte(doc(op("a", "      x-css-tool: t\n      x-css-legacy-tool: l\n"+
		strings.Replace(mcp("n", "1"), "profile", "{list: items, noun: item}", 1)))))
	if err != nil || len(regs) != 1 || regs[0].Body != "B" || regs[0].Result != "R" || !regs[0].BodyOptional ||
		regs[0].Mirror.Summary != (MirrorSummary{Style: "list", Arg: "items", Noun: "item"}) {
		t.Fatalf("Registry = %+v, %v", regs, err)
	}
}
