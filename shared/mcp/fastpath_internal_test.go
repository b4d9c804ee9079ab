package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// FuzzAppendString: whatever the text, the fast path's string is JSON that decodes to what
// encoding/json's own encoding decodes to (the text itself when it is valid UTF-8).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `{"a":"b\"c"}`, "tab\tnew\nline\rcr", "\x00\x1f\x7f", "<b>&</b>",
		"\u2028\u2029", "é ü 漢字 🎬", "\xff\xfe bad", `back\slash`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString([]byte("x"), s)
		if got[0] != 'x' {
			t.Fatal("appendString overwrote what b held")
		}
		var decoded string
		if err := json.Unmarshal(got[1:], &decoded); err != nil {
			t.Fatalf("%q: not a JSON string: %s (%v)", s, got[1:], err)
		}
		std, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(std, &want); err != nil {
			t.Fatal(err)
		}
		if decoded != want {
			t.Fatalf("%q decodes to %q, encoding/json's to %q", s, decoded, want)
		}
	})
}

// FuzzToolCallDecodesAsTheSDK: whatever body the endpoint lets through (checkMessage, which both paths are
// behind) and the fast path takes, the SDK decodes the same way: a call (not a notification) of tools/call
// with the same id, tool name and arguments. The fast path may leave to the SDK what the SDK would take
// too, never the reverse. And what gets through is strict JSON by an independent reading (encoding/json's
// tokenizer): one value, valid UTF-8, no member name twice in any object (issue 19, item 9).
func FuzzToolCallDecodesAsTheSDK(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"get_notes"}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"get_notes","arguments":null}}`,
		`{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"get_notes","arguments":{"a":[1,{"b":2}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"get_notes"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"get_notes"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"get_notes"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","name":"nope"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"get_notes"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes"}}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes"}} x`,
		`{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"get_notes"}}`,
		`{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"get_notes"}}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"get_notes"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes"},"params":{"name":"get_notes"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","arguments":{"a":1,"a":2}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","arguments":{"a":1,"\u0061":2}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","arguments":{"a":{"b":1,"b":1}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes"}}{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_notes"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_notes","arguments":{"a":"\ud800"}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"get_notes\",\"arguments\":{\"a\":\"\xff\"}}}",
	} {
		f.Add([]byte(s))
	}
	noop := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, nil }
	s := &Server{tools: map[string]sdk.ToolHandler{"get_notes": noop}}
	f.Fuzz(func(t *testing.T, body []byte) {
		// The endpoint lets through what strictJSON accepts, and what else checkMessage accepts: a batch.
		full := checkMessage(body, "2025-03-26") == nil
		if !strictJSON(body) {
			if full && !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")) {
				t.Fatalf("the full reading accepts what the quick check refuses:\n%q", body)
			}
			return // refused before either path, or a batch (which the fast path never takes)
		}
		if !strictReference(body) {
			t.Fatalf("let through, but not strict JSON by encoding/json's reading:\n%q", body)
		}
		id, params, handler := s.toolCall(body)
		if handler == nil {
			return
		}
		msg, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			t.Fatalf("taken, but the SDK does not decode it: %v\n%s", err, body)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() || req.Method != "tools/call" || req.ID != id {
			t.Fatalf("taken as call %v, the SDK decodes %#v\n%s", id.Raw(), msg, body)
		}
		dec := segjson.NewDecoder(bytes.NewReader(req.Params))
		dec.DontMatchCaseInsensitiveStructFields()
		var sdkParams *sdk.CallToolParamsRaw
		if err := dec.Decode(&sdkParams); err != nil || sdkParams == nil {
			t.Fatalf("taken, but the SDK's params do not decode: %v\n%s", err, body)
		}
		if sdkParams.Name != params.Name || !bytes.Equal(sdkParams.Arguments, params.Arguments) {
			t.Fatalf("taken as %s(%s), the SDK reads %s(%s)", params.Name, params.Arguments, sdkParams.Name, sdkParams.Arguments)
		}
	})
}

// strictReference reports whether body is one JSON value in valid UTF-8 with no member name twice in any
// object, read by encoding/json (independent of the endpoint's jsontext).
func strictReference(body []byte) bool {
	if !utf8.Valid(body) || !json.Valid(body) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var value func() bool
	value = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				name, err := dec.Token()
				key, ok := name.(string)
				if err != nil || !ok || seen[key] {
					return false
				}
				seen[key] = true
				if !value() {
					return false
				}
			}
			_, err := dec.Token()
			return err == nil
		case json.Delim('['):
			for dec.More() {
				if !value() {
					return false
				}
			}
			_, err := dec.Token()
			return err == nil
		}
		return true
	}
	return value()
}
