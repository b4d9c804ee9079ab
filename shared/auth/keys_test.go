package auth

import "testing"

func TestNewKey(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		k := NewKey()
		if !ValidKeyFormat(k) {
			t.Fatalf("NewKey() = %q: not a valid key", k)
		}
		if seen[k] {
			t.Fatalf("NewKey() repeated %q", k)
		}
		seen[k] = true
	}
}

func TestValidKeyFormat(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"sk-css-0123456789abcdef0123456789abcdef", true},
		{"sk-css-0123456789ABCDEF0123456789abcdef", false}, // upper case
		{"sk-css-0123456789abcdef0123456789abcde", false},  // 31 hex
		{"sk-css-0123456789abcdef0123456789abcdef0", false},
		{"sk-abc-0123456789abcdef0123456789abcdef", false},
		{"sk-css-0123456789abcdef0123456789abcdeg", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := ValidKeyFormat(tt.key); got != tt.want {
			t.Errorf("ValidKeyFormat(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestHashKeyAndPrefix(t *testing.T) {
	const key = "sk-css-0123456789abcdef0123456789abcdef"
	// sha256 of the key, computed independently (printf %s KEY | sha256sum).
	const want = "bf5de71086f94d855be6aee0bc3a8ace94c09d8ecc55db85fc69fd8123dd3ff1"
	if got := HashKey(key); got != want {
		t.Errorf("HashKey = %q, want %q", got, want)
	}
	for in, want := range map[string]string{key: "sk-css-0123", "sk-css-0123": "sk-css-0123", "sk-css-012": "sk-css-012", "": ""} {
		if got := KeyPrefix(in); got != want {
			t.Errorf("KeyPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}
