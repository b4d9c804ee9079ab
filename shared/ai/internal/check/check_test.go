package check

import (
	"strings"
	"testing"
)

func TestSchemaName(t *testing.T) {
	for name, want := range map[string]bool{
		"titles": true, "grade_titles": true, "long-script": true, "A9": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "two words": false, "a.b": false, "é": false, "a/b": false, "a\x00": false,
	} {
		if got := SchemaName(name); got != want {
			t.Errorf("SchemaName(%q) = %v, want %v", name, got, want)
		}
	}
}
