package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// guard is the cold-start regression guard (issue 33): each function's served request (its +table row),
// without its waits for the table and the identity provider, takes at most limit times the reference's
// p50 (a table baseline, also without its wait); allow raises the limit of the functions it names.
type guard struct {
	ref   string
	limit float64
	allow map[string]float64
}

// parseRatio reads name=ratio, ratio a number above 0.
func parseRatio(s string) (string, float64, error) {
	name, v, ok := strings.Cut(s, "=")
	ratio, err := strconv.ParseFloat(v, 64)
	if !ok || name == "" || err != nil || !(ratio > 0) {
		return "", 0, fmt.Errorf("%q: want name=ratio, a ratio above 0", s)
	}
	return name, ratio, nil
}

// guardFlag is -guard name=ratio.
type guardFlag struct{ g *guard }

func (f guardFlag) String() string {
	if f.g == nil || f.g.ref == "" {
		return ""
	}
	return fmt.Sprintf("%s=%g", f.g.ref, f.g.limit)
}

func (f guardFlag) Set(s string) (err error) {
	f.g.ref, f.g.limit, err = parseRatio(s)
	return err
}

// allowFlag is -allow name=ratio (repeatable).
type allowFlag struct{ g *guard }

func (f allowFlag) String() string { return "" }

func (f allowFlag) Set(s string) error {
	name, ratio, err := parseRatio(s)
	if err != nil {
		return err
	}
	if f.g.allow == nil {
		f.g.allow = map[string]float64{}
	}
	f.g.allow[name] = ratio
	return nil
}

// guarded says whether the guard judges r: a function's table row, not another build's (name@label).
func guarded(r row) bool {
	fn, ok := strings.CutSuffix(r.name, "+table")
	return ok && r.metered && !strings.Contains(fn, "@")
}

// validate checks, before any run, that the reference is a table baseline among the targets and that each
// allowance names a function timed on its table request: a misspelt name would otherwise judge nothing.
func (g guard) validate(targets []target, withTable bool) error {
	if g.ref == "" {
		if len(g.allow) > 0 {
			return errors.New("-allow without -guard")
		}
		return nil
	}
	if !withTable {
		return errors.New("-guard needs -dynamodb: it judges the table rows")
	}
	names := map[string]bool{}
	for _, t := range targets {
		names[t.name] = true
	}
	if !isTableBaseline(g.ref) || !names[g.ref] {
		return fmt.Errorf("-guard %s: not a table baseline (hellotable...) among the targets", g.ref)
	}
	for fn := range g.allow {
		if _, ok := tableRequests[fn]; !ok || !names[fn] {
			return fmt.Errorf("-allow %s: not a function of the service among the targets", fn)
		}
	}
	return nil
}

// check prints each guarded row's ratio to the reference against its limit, and returns an error naming
// every row over its limit.
func (g guard) check(out io.Writer, rows []row) error {
	i := slices.IndexFunc(rows, func(r row) bool { return r.name == g.ref })
	if i < 0 || rows[i].ownP50 <= 0 {
		return fmt.Errorf("guard: no time without the wait for %s, the reference", g.ref)
	}
	ref := rows[i].ownP50
	fmt.Fprintf(out, "\nguard: p50 without the waits / %s's (%.1f ms), at most %.2fx", g.ref, float64(ref)/float64(time.Millisecond), g.limit)
	for _, fn := range slices.Sorted(maps.Keys(g.allow)) {
		fmt.Fprintf(out, ", %s %.2fx", fn, g.allow[fn])
	}
	fmt.Fprintln(out)
	var over []string
	for _, r := range rows {
		if !guarded(r) {
			continue
		}
		limit := cmp.Or(g.allow[strings.TrimSuffix(r.name, "+table")], g.limit) // an allowance is above 0
		ratio := float64(r.ownP50) / float64(ref)
		verdict := "ok"
		if ratio > limit {
			verdict = fmt.Sprintf("OVER %.2fx", limit)
			over = append(over, fmt.Sprintf("%s %.2fx > %.2fx", r.name, ratio, limit))
		}
		fmt.Fprintf(out, "  %-22s %.2fx  %s\n", r.name, ratio, verdict)
	}
	if len(over) > 0 {
		return fmt.Errorf("cold-start guard broken: %s (p50 without the waits / %s's)", strings.Join(over, ", "), g.ref)
	}
	return nil
}
