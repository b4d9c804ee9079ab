// Package memstore is the table the tests of services run on: the Pebble adapter (which passes the
// store's conformance suite) on an in-memory file system, closed when the test ends.
package memstore

import (
	"testing"

	"github.com/creatorstrategy/css/shared/store/pebble"
)

// New opens a table in memory for t; opts are Pebble's (pebble.WithClock for expiry on a test's clock).
func New(t testing.TB, opts ...pebble.Option) *pebble.Table {
	t.Helper()
	tbl, err := pebble.OpenMemory(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tbl.Close(); err != nil {
			t.Error(err)
		}
	})
	return tbl
}
