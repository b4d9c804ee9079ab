package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/store"
)

// conflictAttempts bounds the retries of a write that keeps losing to concurrent transactions, so a table
// that answers ErrConflict forever fails the test instead of hanging it.
const conflictAttempts = 200

// writeRetrying retries on ErrConflict, as the Store layer does.
func writeRetrying(ctx context.Context, tbl store.Table, ops ...store.Op) error {
	for attempt := range conflictAttempts {
		err := tbl.Write(ctx, ops...)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		// Back off a little so the contenders spread out; nothing here waits for a deadline.
		time.Sleep(time.Duration(attempt%10+1) * time.Millisecond)
	}
	return fmt.Errorf("still conflicting after %d attempts", conflictAttempts)
}

// testConcurrentBoundedCounter races 30 writers, each taking a slot of a counter bounded at 10 and writing
// its item in the same transaction: exactly 10 win, and exactly their items exist.
func testConcurrentBoundedCounter(t *testing.T, s suite) {
	tbl := s.fresh(t)
	const workers, limit = 30, 10
	counter := key("P", "COUNT#items")
	itemKey := func(i int) store.Key { return key("P", fmt.Sprintf("ITEM#%02d", i)) }

	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			it := store.Item{Key: itemKey(i), Data: []byte(strconv.Itoa(i))}
			errs[i] = writeRetrying(t.Context(), tbl, store.Incr(counter, 1, limit), store.Put(it, store.IfNotExists))
		})
	}
	wg.Wait()

	var won []store.Item
	for i, err := range errs {
		switch {
		case err == nil:
			won = append(won, store.Item{Key: itemKey(i), Data: []byte(strconv.Itoa(i))})
		case store.FailedOp(err) == 0:
		default:
			t.Errorf("writer %d: %v; want success or the counter's condition failure (op 0)", i, err)
		}
	}
	if len(won) != limit {
		t.Fatalf("%d writers succeeded; want exactly %d", len(won), limit)
	}
	got, _ := queryAll(t, tbl, store.Query{PK: "P", Prefix: "ITEM#"}, 3)
	if !sameItems(got, won) {
		t.Fatalf("items = %s; want those of the winners %s", describeItems(got), describeItems(won))
	}
	wantItem(t, tbl, store.Item{Key: counter, Count: limit})
}

// testConcurrentOptimisticLock races 20 writers doing read-version-then-PutIfVersion on one item until each
// has succeeded once: every success must start from a distinct version (no lost update).
func testConcurrentOptimisticLock(t *testing.T, s suite) {
	tbl := s.fresh(t)
	const workers, initial = 20, 7
	k := key("P", "DOC")
	mustWrite(t, tbl, store.Put(store.Item{Key: k, Data: []byte(strconv.Itoa(initial)), Version: initial}, store.Always))

	var mu sync.Mutex
	wonFrom := map[int64]int{} // version a success replaced -> writer
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range conflictAttempts {
				cur, err := tbl.Get(t.Context(), k)
				if err != nil {
					t.Errorf("writer %d: Get: %v", w, err)
					return
				}
				next := store.Item{Key: k, Data: []byte(strconv.FormatInt(cur.Version+1, 10))}
				err = tbl.Write(t.Context(), store.PutIfVersion(next, cur.Version))
				switch {
				case err == nil:
					mu.Lock()
					defer mu.Unlock()
					if other, dup := wonFrom[cur.Version]; dup {
						t.Errorf("writers %d and %d both replaced version %d: lost update", other, w, cur.Version)
					}
					wonFrom[cur.Version] = w
					return
				case errors.Is(err, store.ErrConditionFailed), errors.Is(err, store.ErrConflict):
					// Someone else got in first: read again.
				default:
					t.Errorf("writer %d: Write: %v", w, err)
					return
				}
			}
			t.Errorf("writer %d: no success in %d attempts", w, conflictAttempts)
		})
	}
	wg.Wait()

	if len(wonFrom) != workers {
		t.Fatalf("%d successes; want %d", len(wonFrom), workers)
	}
	final := int64(initial + workers)
	wantItem(t, tbl, store.Item{Key: k, Data: []byte(strconv.FormatInt(final, 10)), Version: final})
}
