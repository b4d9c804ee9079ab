// Package check holds the request checks the network adapters share.
package check

// SchemaName reports whether name is what Bedrock takes as a tool name and OpenAI as a response-format
// name: 1 to 64 ASCII letters, digits, '_' or '-'. (A loop, not a regexp: it costs nothing at init.)
func SchemaName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
