package mcp

import "testing"

// BenchmarkStrictJSON is what reading a tools/call strictly adds to every request (the fast path's).
func BenchmarkStrictJSON(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_my_videos","arguments":{"status":"planned"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if !strictJSON(body) {
			b.Fatal("refused")
		}
	}
}
