package mcp_test

import "testing"

// Issue 19 item 3: the tools refuse stored text that is not plain text as REST does, naming the argument.
func TestToolsRefuseUncleanText(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(e.keyA)
	for _, v := range []string{"\u0000", "\u001b[31mred", "abc\u202egnp.exe", "\u200b", "   ", "\uffff"} {
		fails(t, cs, "save_note", map[string]any{"category": "general", "content": v}, "VALIDATION_ERROR: content: must be plain text")
		fails(t, cs, "commit_video", map[string]any{"title": v, "contentType": "Long", "formulaType": "listicle"}, "VALIDATION_ERROR: title: must be plain text")
	}
	ok(t, cs, "save_note", map[string]any{"category": "general", "content": "line one\nline two"})
}
