package contract

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// BenchmarkLoad measures what a cold start pays for the contract: Load returns the static contract
// (static_gen.go), decoding nothing.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadDecode measures decoding contract.json at run time: what Load cost before static_gen.go
// (the generator and the tests still decode it this way).
func BenchmarkLoadDecode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := load(contract); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadDocument measures LoadDocument: the whole served document (descriptions included) scanned.
func BenchmarkLoadDocument(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadDocument(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstUse measures Load plus compiling the validators of one Lambda's operations (planning).
// Load returns the same contract every time, whose validators compile once, so each iteration compiles
// them itself, as the first request of each operation does.
func BenchmarkFirstUse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		c, err := Load()
		if err != nil {
			b.Fatal(err)
		}
		for _, op := range c.Operations {
			if op.Function == "planning" {
				if _, err := compileOperation(&op.src); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

func BenchmarkValidateBody(b *testing.B) {
	c, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	bodies := []struct{ name, op, body string }{
		{"createNote", "createNote", `{"category":"style","content":"Short sentences, no jargon, one idea per video."}`},
		{"generateTitles", "generateTitles", `{"title":"How I edit a week of videos in one day","type":"how-to","context":"` + strings.Repeat("context ", 100) + `"}`},
		{"putNicheProfile", "putNicheProfile", `{"broadNiche":"Productivity","focusedNiche":"Editing workflows for solo creators",` +
			`"keywords":["editing","workflow","batching","solo"],"topCompetitors":["a","b","c"],"contentLanguage":"english"}`},
		{"invalid", "generateTitles", `{"title":"","type":"how-to"}`},
	}
	for _, bb := range bodies {
		op := c.Operation(bb.op)
		raw := []byte(bb.body)
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				_, _ = op.ValidateBody(raw)
			}
		})
	}
}

func BenchmarkValidateParams(b *testing.B) {
	c, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	op := c.Operation("listHistory")
	query := url.Values{"tool": {"titles"}, "search": {"edit"}, "limit": {"50"}}
	header := http.Header{"X-Channel-Id": {uuidLower}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := op.ValidateParams(nil, query, header); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOperation measures Contract.Operation, a binary search over the operations sorted by id (the
// static contract holds no map), for every operation in turn.
func BenchmarkOperation(b *testing.B) {
	c, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		op := c.Operations[i%len(c.Operations)]
		if c.Operation(op.ID) != op {
			b.Fatal(op.ID)
		}
		i++
	}
}
