package quota

import (
	"testing"
)

func TestCostArithmetic(t *testing.T) {
	a := Cost{Units: 44, Searches: 3}
	b := Cost{Units: 10, Stats: 10}
	if got := a.Add(b); got != (Cost{Units: 54, Searches: 3, Stats: 10}) {
		t.Errorf("Add = %+v", got)
	}
	if got := a.Sub(b); got != (Cost{Units: 34, Searches: 3, Stats: -10}) {
		t.Errorf("Sub = %+v", got)
	}
	if got := a.Sub(b).AtLeast0(); got != (Cost{Units: 34, Searches: 3}) {
		t.Errorf("AtLeast0 = %+v", got)
	}
	if got := DefaultDaily.Percent(20); got != (Cost{Units: 1800, Searches: 18, Stats: 1800}) {
		t.Errorf("Percent = %+v", got)
	}
	if !a.Within(Cost{Units: 44, Searches: 3}) || a.Within(Cost{Units: 44, Searches: 2, Stats: 100}) {
		t.Error("Within misjudges a bucket at and over its limit")
	}
	if got := a.String(); got != "44 units, 3 search calls" {
		t.Errorf("String = %q", got)
	}
	if got := (Cost{}).String(); got != "nothing" {
		t.Errorf("String of zero = %q", got)
	}
	for _, b := range Buckets() {
		if (Cost{}).With(b, 7).Of(b) != 7 {
			t.Errorf("With/Of disagree on %s", b)
		}
	}
}
