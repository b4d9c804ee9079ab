package pebble

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/store"
	"github.com/creatorstrategy/css/shared/store/storetest"
)

func openTemp(t testing.TB, opts ...Option) (*Table, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "table")
	tbl, err := Open(path, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := tbl.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return tbl, path
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Table {
		tbl, _ := openTemp(t)
		return tbl
	})
}

func TestResearchConformance(t *testing.T) {
	storetest.RunResearch(t, func(t *testing.T, now func() time.Time) store.Table {
		tbl, _ := openTemp(t, WithClock(now))
		return tbl
	})
}

func TestConnectionConformance(t *testing.T) {
	storetest.RunConnection(t, func(t *testing.T, now func() time.Time) store.Table {
		tbl, _ := openTemp(t, WithClock(now))
		return tbl
	})
}

// Open creates the folder and its missing parents for its owner alone (0700): the table holds key hashes
// and every tenant's data. A folder an earlier version left open to others is tightened.
func TestOpenCreatesPrivateDirectories(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "a", "b", "c", "table")
	tbl, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := tbl.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, dir := range []string{path, filepath.Join(root, "a"), filepath.Join(root, "a", "b", "c")} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatalf("not created: %v", err)
		}
		if perm := fi.Mode().Perm(); perm != 0o700 {
			t.Errorf("%s: mode %04o, want 0700", dir, perm)
		}
	}
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if tbl, err = Open(path); err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := tbl.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("an existing folder of mode 0755 was left at %v, %v", fi.Mode(), err)
	}
}

func TestOpenInUse(t *testing.T) {
	t.Parallel()
	_, dir := openTemp(t)
	second, err := Open(dir)
	if err == nil {
		second.Close()
		t.Fatal("second Open of a database in use succeeded")
	}
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Open: %v; want ErrInUse", err)
	}
}

// holderEnv makes the test binary hold a database open until its stdin closes.
const holderEnv = "PEBBLE_TEST_HOLDER"

func TestOpenInUseByAnotherProcess(t *testing.T) {
	if dir := os.Getenv(holderEnv); dir != "" {
		tbl, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("open")
		io.Copy(io.Discard, os.Stdin)
		tbl.Close()
		return
	}
	dir := filepath.Join(t.TempDir(), "table")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenInUseByAnotherProcess$")
	cmd.Env = append(os.Environ(), holderEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "open\n" {
		stdin.Close()
		t.Fatalf("holder said %q, %v; want it to report the database open", line, err)
	}
	if tbl, err := Open(dir); !errors.Is(err, ErrInUse) {
		if err == nil {
			tbl.Close()
		}
		t.Errorf("Open while another process holds it: %v; want ErrInUse", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	tbl, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after the holder closed it: %v", err)
	}
	tbl.Close()
}

// TestCloseWaitsForWrites closes the table while writes are in flight: every write either succeeded, and
// is in the reopened database, or got ErrClosed; reads after Close get ErrClosed too.
func TestCloseWaitsForWrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "table")
	tbl, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const writers = 32
	var wg sync.WaitGroup
	results := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			it := store.Item{Key: store.Key{PK: "P", SK: fmt.Sprintf("S#%02d", i)}, Data: []byte("x")}
			results[i] = tbl.Write(context.Background(), store.Put(it, store.Always))
		}()
	}
	if err := tbl.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	if _, err := tbl.Get(t.Context(), store.Key{PK: "P", SK: "S#00"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close: %v; want ErrClosed", err)
	}
	if _, err := tbl.Query(t.Context(), store.Query{PK: "P"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Query after Close: %v; want ErrClosed", err)
	}
	tbl, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for i, res := range results {
		_, err := tbl.Get(t.Context(), store.Key{PK: "P", SK: fmt.Sprintf("S#%02d", i)})
		switch {
		case res == nil && err != nil:
			t.Errorf("write %d succeeded but reads back %v", i, err)
		case res != nil && !errors.Is(res, ErrClosed):
			t.Errorf("write %d: %v; want success or ErrClosed", i, res)
		case res != nil && err == nil:
			t.Errorf("write %d answered ErrClosed but was stored", i)
		}
	}
}

func TestReopenKeepsWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "table")
	it := store.Item{Key: store.Key{PK: "P", SK: "S"}, Data: []byte("kept"), Version: 2, Count: 3, ExpiresAt: 1 << 40}
	tbl, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := tbl.Write(t.Context(), store.Put(it, store.Always)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := tbl.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	tbl, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer tbl.Close()
	got, err := tbl.Get(t.Context(), it.Key)
	if err != nil || string(got.Data) != "kept" || got.Version != 2 || got.Count != 3 || got.ExpiresAt != 1<<40 {
		t.Fatalf("after reopen Get = %+v, %v; want %+v", got, err, it)
	}
}

// TestConcurrentWrites runs many writes at once, so several share an fsync: each write still stands or
// falls alone (of the writes racing for one key exactly one wins, every other write is kept), and the
// outcome is what a reopened database holds.
func TestConcurrentWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "table")
	tbl, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const writers = 64
	var wg sync.WaitGroup
	var won atomic.Int64
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := store.Item{Key: store.Key{PK: "P", SK: fmt.Sprintf("own#%02d", i)}, Data: []byte("x")}
			race := store.Item{Key: store.Key{PK: "P", SK: "race"}, Data: fmt.Appendf(nil, "%d", i)}
			if err := tbl.Write(t.Context(), store.Put(mine, store.Always)); err != nil {
				t.Errorf("own write %d: %v", i, err)
			}
			switch err := tbl.Write(t.Context(), store.Put(race, store.IfNotExists), store.Incr(store.Key{PK: "P", SK: "count"}, 1, 0)); {
			case err == nil:
				won.Add(1)
			case !errors.Is(err, store.ErrConditionFailed):
				t.Errorf("racing write %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d racing writes won; want exactly 1", won.Load())
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Write(t.Context(), store.Put(store.Item{Key: store.Key{PK: "P", SK: "late"}}, store.Always)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close: %v; want ErrClosed", err)
	}
	tbl, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	page, err := tbl.Query(t.Context(), store.Query{PK: "P", Prefix: "own#"})
	if err != nil || len(page.Items) != writers {
		t.Fatalf("after reopen: %d own items, %v; want %d", len(page.Items), err, writers)
	}
	if c, err := tbl.Get(t.Context(), store.Key{PK: "P", SK: "count"}); err != nil || c.Count != 1 {
		t.Fatalf("counter moved with the racing writes: %+v, %v; want 1 (only the winner's)", c, err)
	}
}

// crashEnv makes the test binary act as a writer that is killed right after its write is acknowledged.
const crashEnv = "PEBBLE_TEST_CRASH_WRITER"

func TestAcknowledgedWriteSurvivesKill(t *testing.T) {
	if path := os.Getenv(crashEnv); path != "" {
		crashWriter(path)
		return
	}
	path := filepath.Join(t.TempDir(), "table")
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcknowledgedWriteSurvivesKill$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("writer: %v, output %q; want it killed by SIGKILL", err, out)
	}
	if string(out) != "acknowledged\n" {
		t.Fatalf("writer output %q; want the acknowledgement before the kill", out)
	}
	tbl, err := Open(path)
	if err != nil {
		t.Fatalf("Open after kill: %v", err)
	}
	defer tbl.Close()
	for i := range 3 {
		if _, err := tbl.Get(t.Context(), store.Key{PK: "P", SK: fmt.Sprintf("S#%d", i)}); err != nil {
			t.Fatalf("acknowledged item %d after kill: %v", i, err)
		}
	}
}

// crashWriter writes three items, reports them acknowledged and kills its own process without closing.
func crashWriter(path string) {
	tbl, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for i := range 3 {
		it := store.Item{Key: store.Key{PK: "P", SK: fmt.Sprintf("S#%d", i)}, Data: []byte("x")}
		if err := tbl.Write(context.Background(), store.Put(it, store.Always)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	fmt.Println("acknowledged")
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal ends the process
}

func TestExpiryFollowsClock(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	tbl, _ := openTemp(t, WithClock(func() time.Time { return now }))
	k := store.Key{PK: "P", SK: "S"}
	if err := tbl.Write(t.Context(), store.Put(store.Item{Key: k, ExpiresAt: 1_000_010}, store.Always)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	cases := []struct {
		at   time.Time
		live bool
	}{
		{time.Unix(1_000_009, 999_999_999), true},
		{time.Unix(1_000_010, 0), false}, // from the second ExpiresAt names on, the item is gone
		{time.Unix(1_000_011, 0), false},
	}
	for _, c := range cases {
		now = c.at
		_, err := tbl.Get(t.Context(), k)
		if live := err == nil; live != c.live || err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Errorf("at %v: Get error %v; want live %t", c.at, err, c.live)
		}
		err = tbl.Write(t.Context(), store.Check(k, store.IfExists), store.Put(store.Item{Key: store.Key{PK: "P", SK: "T"}}, store.Always))
		if ok := err == nil; ok != c.live {
			t.Errorf("at %v: Check IfExists error %v; want live %t", c.at, err, c.live)
		}
	}
}

func TestRejectsZeroBytes(t *testing.T) {
	tbl, _ := openTemp(t)
	ctx := t.Context()
	bad := []store.Key{{PK: "a\x00b", SK: "S"}, {PK: "P", SK: "S\x00"}}
	for _, k := range bad {
		if err := tbl.Write(ctx, store.Put(store.Item{Key: k}, store.Always)); !errors.Is(err, errInvalid) {
			t.Errorf("Put %q: %v; want errInvalid", k, err)
		}
		if _, err := tbl.Get(ctx, k); !errors.Is(err, errInvalid) {
			t.Errorf("Get %q: %v; want errInvalid", k, err)
		}
	}
	if _, err := tbl.Query(ctx, store.Query{PK: "P", Prefix: "S\x00"}); !errors.Is(err, errInvalid) {
		t.Errorf("Query with 0x00 in prefix: %v; want errInvalid", err)
	}
	if _, err := tbl.Query(ctx, store.Query{PK: "P", Cursor: store.EncodeCursor("S\x00T")}); !errors.Is(err, store.ErrBadCursor) {
		t.Errorf("Query with 0x00 in cursor: %v; want ErrBadCursor", err)
	}
	if _, err := tbl.Query(ctx, store.Query{PK: "P", Limit: -1}); !errors.Is(err, errInvalid) {
		t.Errorf("Query with negative limit: %v; want errInvalid", err)
	}
}

func TestIncrOverflowFailsCondition(t *testing.T) {
	tbl, _ := openTemp(t)
	k := store.Key{PK: "P", SK: "COUNT#x"}
	if err := tbl.Write(t.Context(), store.Put(store.Item{Key: k, Count: 1<<63 - 2}, store.Always)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := tbl.Write(t.Context(), store.Incr(k, 5, 0)); store.FailedOp(err) != 0 {
		t.Fatalf("Incr past MaxInt64: %v; want a condition failure", err)
	}
}

func BenchmarkGet(b *testing.B) {
	tbl, _ := openTemp(b)
	k := store.Key{PK: "CH#bench", SK: "VIDEO#1"}
	if err := tbl.Write(b.Context(), store.Put(store.Item{Key: k, Data: make([]byte, 1024)}, store.Always)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := tbl.Get(b.Context(), k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPut(b *testing.B) {
	tbl, _ := openTemp(b)
	it := store.Item{Key: store.Key{PK: "CH#bench", SK: "VIDEO#1"}, Data: make([]byte, 1024)}
	for b.Loop() {
		it.Version++
		if err := tbl.Write(b.Context(), store.Put(it, store.Always)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQuery reads a page of 100 items of 1 KiB from a partition of 1000.
func BenchmarkQuery(b *testing.B) {
	tbl, _ := openTemp(b)
	for i := 0; i < 1000; i += store.MaxTransactOps {
		ops := make([]store.Op, store.MaxTransactOps)
		for j := range ops {
			ops[j] = store.Put(store.Item{Key: store.Key{PK: "CH#bench", SK: fmt.Sprintf("VIDEO#%04d", i+j)}, Data: make([]byte, 1024)}, store.Always)
		}
		if err := tbl.Write(b.Context(), ops...); err != nil {
			b.Fatal(err)
		}
	}
	q := store.Query{PK: "CH#bench", Prefix: "VIDEO#", Limit: 100, Cursor: store.EncodeCursor("VIDEO#0500")}
	for b.Loop() {
		page, err := tbl.Query(b.Context(), q)
		if err != nil || len(page.Items) != 100 {
			b.Fatalf("Query = %d items, %v", len(page.Items), err)
		}
	}
}

// BenchmarkQueryNewestFirst reads a partition of 100 items of 400 bytes newest first, without a limit: what
// a list endpoint does.
func BenchmarkQueryNewestFirst(b *testing.B) {
	tbl, _ := openTemp(b)
	for i := range 100 {
		it := store.Item{Key: store.Key{PK: "CH#bench", SK: fmt.Sprintf("VIDEO#%04d", i)}, Data: make([]byte, 400)}
		if err := tbl.Write(b.Context(), store.Put(it, store.Always)); err != nil {
			b.Fatal(err)
		}
	}
	q := store.Query{PK: "CH#bench", Prefix: "VIDEO#", Desc: true}
	b.ReportAllocs()
	for b.Loop() {
		page, err := tbl.Query(b.Context(), q)
		if err != nil || len(page.Items) != 100 || page.Items[0].SK != "VIDEO#0099" {
			b.Fatalf("Query = %d items, %v", len(page.Items), err)
		}
	}
}

func TestItemSizeEdges(t *testing.T) {
	tbl, _ := openTemp(t)
	storetest.ItemSizeEdges(t, tbl)
}

// TestValueFormats: an item without counters is stored as format 1, as before counters existed (so the
// values an earlier build wrote read the same); one with counters as format 2, which reads back whole; a
// format-2 value cut anywhere, or with a counters section that overruns it, is refused, never misread.
func TestValueFormats(t *testing.T) {
	k := store.Key{PK: "P", SK: "S"}
	plain := store.Item{Key: k, Data: []byte(`{"a":1}`), Version: 3, Count: -2, ExpiresAt: 1700000000}
	v := encodeValue(plain)
	if v[0] != formatV1 {
		t.Fatalf("an item without counters is format %d", v[0])
	}
	withCounters := plain
	withCounters.Counters = map[string]int64{"other@60": 7, "generation@60": -1, "x": 0}
	v = encodeValue(withCounters)
	if v[0] != formatV2 {
		t.Fatalf("an item with counters is format %d", v[0])
	}
	head, body, err := parseValue(v)
	if err != nil {
		t.Fatal(err)
	}
	got := head.item(k, body)
	if string(got.Data) != string(plain.Data) || got.Version != 3 || got.Count != -2 || got.ExpiresAt != 1700000000 ||
		!maps.Equal(got.Counters, withCounters.Counters) {
		t.Fatalf("read back %+v; want %+v", got, withCounters)
	}
	dataLen := len(plain.Data)
	for cut := 1; cut < len(v)-dataLen; cut++ {
		if _, _, err := parseValue(v[:cut]); err == nil {
			t.Errorf("a value cut to %d of %d bytes (inside its header or counters) was read", cut, len(v))
		}
	}
}
