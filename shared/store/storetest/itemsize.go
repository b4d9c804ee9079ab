package storetest

import (
	"errors"
	"testing"

	"github.com/creatorstrategy/css/shared/store"
)

// MaxItemBytes is DynamoDB's item size limit, which the embedded tables enforce on a put's key and data.
const MaxItemBytes = 400 << 10

// ItemSizeEdges checks an embedded table's item size limit at its edge: a put whose PK, SK and Data come to
// exactly MaxItemBytes is stored, one byte more is a malformed call. The key bytes count: the same data under
// a longer key is refused. (DynamoDB counts attribute names and the other attributes too, so the edge is not
// the same there and this is not part of Run.)
func ItemSizeEdges(t *testing.T, tbl store.Table) {
	t.Helper()
	const pk = "CH#0190a000-0000-7000-8000-000000000001"
	k := store.Key{PK: pk, SK: "VIDEO#0190a000-0000-7000-8000-000000000002"}
	same := store.Key{PK: pk, SK: "VIDEO#0190a000-0000-7000-8000-000000000003"} // as long as k
	longer := store.Key{PK: pk, SK: "VIDEO#0190a000-0000-7000-8000-0000000000044"}
	keyBytes := len(k.PK) + len(k.SK)
	tests := []struct {
		name string
		key  store.Key
		data int
		ok   bool
	}{
		{"key and data of exactly the limit", k, MaxItemBytes - keyBytes, true},
		{"one byte over, in the data", same, MaxItemBytes - keyBytes + 1, false},
		{"one byte over, in the key", longer, MaxItemBytes - keyBytes, false},
	}
	for _, tt := range tests {
		err := tbl.Write(t.Context(), store.Put(store.Item{Key: tt.key, Data: make([]byte, tt.data)}, store.Always))
		if tt.ok && err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if !tt.ok && !errors.Is(err, store.ErrInvalidCall) {
			t.Errorf("%s: %v; want store.ErrInvalidCall", tt.name, err)
		}
		got, err := tbl.Get(t.Context(), tt.key)
		if stored := err == nil && got.Key == tt.key; stored != tt.ok {
			t.Errorf("%s: stored %t (%v), want %t", tt.name, stored, err, tt.ok)
		}
	}
}
