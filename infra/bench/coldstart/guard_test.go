package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// The guard's decision on synthetic rows: each function's time without its waits against the reference's.
func TestGuardCheck(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	ref := row{name: "hellotable2", metered: true, p50: ms(30), ownP50: ms(10)}
	table := func(name string, own float64) row {
		return row{name: name, metered: true, p50: ms(own + 20), ownP50: ms(own)}
	}
	g := guard{ref: "hellotable2", limit: 1.5, allow: map[string]float64{"mcp": 1.6}}
	tests := []struct {
		name string
		rows []row
		over []string // the rows the error must name; none: no error
	}{
		{"all within, one at its limit", []row{ref, table("videos+table", 12), table("planning+table", 15)}, nil},
		{"one over", []row{ref, table("videos+table", 12), table("webhooks+table", 15.1)}, []string{"webhooks+table"}},
		{"an allowance is its function's", []row{ref, table("mcp+table", 16), table("videos+table", 16)}, []string{"videos+table"}},
		{"over even its allowance", []row{ref, table("mcp+table", 16.2)}, []string{"mcp+table"}},
		{"every row over is named", []row{ref, table("keys+table", 21), table("context+table", 18)}, []string{"keys+table", "context+table"}},
		// keys: its wait (table and identity provider) is off in ownP50; the whole run is not judged.
		{"judged without the waits", []row{ref, {name: "keys+table", metered: true, p50: ms(60), ownP50: ms(14)}}, nil},
		{"another build's row is not judged", []row{ref, table("videos@before+table", 30)}, nil},
		{"the default event's rows are not judged", []row{ref, {name: "videos", p50: ms(40)}, {name: "hello", p50: ms(2)}}, nil},
		{"other baselines are not judged", []row{ref, {name: "hellotable4", metered: true, ownP50: ms(30)}}, nil},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		err := g.check(&out, tt.rows)
		if len(tt.over) == 0 {
			if err != nil {
				t.Errorf("%s: %v\n%s", tt.name, err, out.String())
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error, want %v over\n%s", tt.name, tt.over, out.String())
			continue
		}
		for _, name := range tt.over {
			if !strings.Contains(err.Error(), name+" ") || !strings.Contains(out.String(), name) {
				t.Errorf("%s: error %q or report does not name %s\n%s", tt.name, err, name, out.String())
			}
		}
		if n := strings.Count(out.String(), "OVER"); n != len(tt.over) {
			t.Errorf("%s: %d rows reported over, want %d\n%s", tt.name, n, len(tt.over), out.String())
		}
	}
}

func TestGuardCheckNeedsTheReference(t *testing.T) {
	g := guard{ref: "hellotable2", limit: 1.5}
	for _, rows := range [][]row{
		{{name: "videos+table", metered: true, ownP50: time.Millisecond}},
		{{name: "hellotable2", metered: true}, {name: "videos+table", metered: true, ownP50: time.Millisecond}},
	} {
		if err := g.check(io.Discard, rows); err == nil {
			t.Errorf("rows %+v: no error without the reference's time", rows)
		}
	}
}

func TestGuardFlags(t *testing.T) {
	var g guard
	if err := (guardFlag{&g}).Set("hellotable2=1.5"); err != nil || g.ref != "hellotable2" || g.limit != 1.5 {
		t.Errorf("-guard hellotable2=1.5: %v, %+v", err, g)
	}
	if err := (allowFlag{&g}).Set("mcp=1.6"); err != nil || g.allow["mcp"] != 1.6 {
		t.Errorf("-allow mcp=1.6: %v, %+v", err, g)
	}
	for _, bad := range []string{"", "hellotable2", "=1.5", "hellotable2=", "hellotable2=x", "hellotable2=0", "hellotable2=-1", "hellotable2=NaN"} {
		if err := (guardFlag{&g}).Set(bad); err == nil {
			t.Errorf("-guard %q: no error", bad)
		}
		if err := (allowFlag{&g}).Set(bad); err == nil {
			t.Errorf("-allow %q: no error", bad)
		}
	}
}

// The guard's names are checked before any run: a misspelt one would judge nothing.
func TestGuardValidate(t *testing.T) {
	targets := []target{{name: "hello"}, {name: "hellotable2"}, {name: "videos"}, {name: "mcp"}, {name: "videos@before"}}
	tests := []struct {
		name      string
		g         guard
		withTable bool
		ok        bool
	}{
		{"no guard", guard{}, false, true},
		{"the Makefile's", guard{ref: "hellotable2", limit: 1.5, allow: map[string]float64{"mcp": 1.6}}, true, true},
		{"without the table", guard{ref: "hellotable2", limit: 1.5}, false, false},
		{"reference not a table baseline", guard{ref: "hello", limit: 1.5}, true, false},
		{"reference not among the targets", guard{ref: "hellotable3", limit: 1.5}, true, false},
		{"allowance for no target", guard{ref: "hellotable2", limit: 1.5, allow: map[string]float64{"keys": 2}}, true, false},
		{"allowance for no function", guard{ref: "hellotable2", limit: 1.5, allow: map[string]float64{"hello": 2}}, true, false},
		{"allowance without a guard", guard{allow: map[string]float64{"mcp": 1.6}}, true, false},
	}
	for _, tt := range tests {
		if err := tt.g.validate(targets, tt.withTable); (err == nil) != tt.ok {
			t.Errorf("%s: err %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func TestRunRejectsABadGuard(t *testing.T) {
	for _, args := range [][]string{
		{"-guard", "hellotable2=1.5", "hello=/bin/true", "hellotable2=/bin/true"}, // no -dynamodb
		{"-guard", "hellotable2", "hello=/bin/true"},
		{"-allow", "mcp=1.6", "hello=/bin/true"},
	} {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}
