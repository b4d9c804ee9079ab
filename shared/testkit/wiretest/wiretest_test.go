package wiretest

import (
	"testing"

	"github.com/creatorstrategy/css/shared/contract"
	"github.com/creatorstrategy/css/shared/testkit/samevents"
)

// Every sample event of events/ has an expected status, and is a request for an operation of the contract.
func TestEverySampleEventIsExpected(t *testing.T) {
	names, err := samevents.Names()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := contract.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if _, ok := SampleStatus[name]; !ok {
			t.Errorf("%s: no expectation in SampleStatus; add one", name)
		}
		OperationOf(t, doc, LoadEvent(t, name))
	}
	if len(names) != len(SampleStatus) {
		t.Errorf("%d sample events, %d expectations", len(names), len(SampleStatus))
	}
}
