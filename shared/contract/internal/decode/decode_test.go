package decode

import (
	"reflect"
	"strings"
	"testing"
)

// TestRawMapSortsAndKeepsTheLast: a components map becomes a Set sorted by name, a name given twice
// keeping its last value (as encoding/json would), and Get finds every name and nothing else.
func TestRawMapSortsAndKeepsTheLast(t *testing.T) {
	set, err := NewScanner(`{"b":{"x":1},"a":[2],"c":"3","a":{"y":4},"a~1b":null}`).RawMap()
	if err != nil {
		t.Fatal(err)
	}
	want := Set{{"a", `{"y":4}`}, {"a~1b", "null"}, {"b", `{"x":1}`}, {"c", `"3"`}}
	if !reflect.DeepEqual(set, want) {
		t.Fatalf("RawMap = %q, want %q", set, want)
	}
	for _, r := range want {
		if got, ok := set.Get(r.Name); !ok || got != r.JSON {
			t.Errorf("Get(%q) = %q, %v", r.Name, got, ok)
		}
	}
	for _, name := range []string{"", "A", "a~", "bb", "d"} {
		if got, ok := set.Get(name); ok {
			t.Errorf("Get(%q) = %q; want none", name, got)
		}
	}
	if got, ok := Set(nil).Get("a"); ok {
		t.Errorf("an empty Set gets %q", got)
	}
	empty, err := NewScanner(`{}`).RawMap()
	if err != nil || len(empty) != 0 {
		t.Errorf("RawMap({}) = %q, %v", empty, err)
	}
}

func TestLookup(t *testing.T) {
	set := Set{{"a/b", "1"}, {"c~d", "2"}, {"e", "3"}}
	for _, tt := range []struct{ ref, want, err string }{
		{ref: "#/components/schemas/e", want: "3"},
		{ref: "#/components/schemas/a~1b", want: "1"},
		{ref: "#/components/schemas/c~0d", want: "2"},
		{ref: "#/components/schemas/f", err: "no such component"},
		{ref: "#/components/parameters/e", err: "only #/components/schemas/* references"},
		{ref: "other.json#/e", err: "only #/components/schemas/* references"},
	} {
		got, err := Lookup(tt.ref, "#/components/schemas/", set)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Lookup(%q) = %q, %v; want an error with %q", tt.ref, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
		}
	}
}
