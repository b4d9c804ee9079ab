package inproc

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// The journal of a durable queue: one append-only file of records, each framed as
//
//	length (uint32 LE) | CRC-32C of the payload (uint32 LE) | payload (JSON)
//
// A record is written (write(2)) under the queue's lock, in the order of the changes it records, so a
// process killed at any point leaves a file whose valid prefix replays to a state the queue went through.
// Send waits for fsync before it returns: a message acknowledged to its sender survives kill -9 and power
// loss. Receives, visibility changes and deletes are written but not waited for: losing one to a power cut
// redelivers a message, which at-least-once delivery allows. A torn record at the tail is cut off on open.
//
// The file is rewritten with only the live messages when the queue opens and when it has grown to several
// times their size.

const (
	journalFile  = "journal"
	journalTemp  = "journal.tmp"
	lockFile     = "LOCK"
	frameHeader  = 8
	maxRecordLen = 4 << 20 // far above a record of the largest message; a longer length is corruption
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Record operations.
const (
	opPut  = "put"  // a message enters the queue (sent, dead-lettered into it, redriven into it, or compacted)
	opRecv = "recv" // a message was received: its receive count and the end of its visibility timeout
	opVis  = "vis"  // a message's visibility changed (a handler asked to retry after a delay)
	opDel  = "del"  // a message left the queue (handled, expired, or moved to another queue)
)

type record struct {
	Op       string            `json:"op"`
	ID       string            `json:"id"`
	Body     []byte            `json:"body,omitempty"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	Sent     int64             `json:"sent,omitempty"` // unix nanoseconds
	Enqueued int64             `json:"enq,omitempty"`  // start of its retention period
	Visible  int64             `json:"vis,omitempty"`
	Count    int               `json:"n,omitempty"`
	InFlight bool              `json:"inflight,omitempty"`
}

type journal struct {
	dir  string
	lock *os.File // holds the directory's lock while the journal is open

	// syncMu admits one fsync at a time. Callers queued behind one usually find their records made durable
	// by it (group commit) and return without a sync of their own.
	syncMu sync.Mutex
	mu     sync.Mutex // guards what follows
	f      *os.File
	size   int64  // bytes in f
	seq    uint64 // appends written to f
	synced uint64 // appends known to be on disk
	err    error  // sticky: after a failed write or sync the journal refuses everything
}

// openJournal locks dir (creating it 0700) and reads its records. The caller applies them, then calls
// rewrite with the live state before appending.
func openJournal(dir string) (*journal, []record, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	lock, err := lockDir(filepath.Join(dir, lockFile))
	if err != nil {
		return nil, nil, err
	}
	j := &journal{dir: dir, lock: lock}
	recs, err := readJournal(filepath.Join(dir, journalFile))
	if err != nil {
		j.unlock()
		return nil, nil, err
	}
	return j, recs, nil
}

// readJournal returns the records of the file's valid prefix; a missing file has none.
func readJournal(path string) ([]record, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var recs []record
	var hdr [frameHeader]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			// EOF: the end; a short header: a write torn by a crash, dropped by the rewrite that follows.
			return recs, nil
		}
		n := binary.LittleEndian.Uint32(hdr[:4])
		if n == 0 || n > maxRecordLen {
			return recs, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return recs, nil
		}
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			return recs, nil
		}
		var rec record
		if err := json.Unmarshal(payload, &rec); err != nil {
			return recs, nil
		}
		recs = append(recs, rec)
	}
}

func frame(rec record) []byte {
	payload, err := json.Marshal(rec)
	if err != nil {
		// A record is strings, bytes and numbers: Marshal cannot fail on it.
		panic(fmt.Sprintf("inproc: encode journal record: %v", err))
	}
	b := make([]byte, frameHeader, frameHeader+len(payload))
	binary.LittleEndian.PutUint32(b[:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// append writes framed records and returns the sequence number that sync must reach for them to be durable.
func (j *journal) append(buf []byte) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return 0, j.err
	}
	if j.f == nil {
		return 0, errClosed
	}
	n, err := j.f.Write(buf)
	j.size += int64(n)
	if err != nil {
		j.err = fmt.Errorf("inproc: write journal %s: %w", j.dir, err)
		return 0, j.err
	}
	j.seq++
	return j.seq, nil
}

// sync returns once every record up to seq is on disk.
func (j *journal) sync(seq uint64) error {
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	j.mu.Lock()
	if j.synced >= seq || j.err != nil {
		err := j.err
		j.mu.Unlock()
		return err
	}
	f, target := j.f, j.seq
	j.mu.Unlock()
	if f == nil {
		return errClosed
	}
	err := f.Sync()
	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil {
		j.err = fmt.Errorf("inproc: sync journal %s: %w", j.dir, err)
		return j.err
	}
	j.synced = max(j.synced, target)
	return nil
}

// sizeNow is the journal file's current size.
func (j *journal) sizeNow() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.size
}

// rewrite replaces the file with recs (the live state), durably, and appends to the new file from then on.
// The caller holds the queue's lock, so nothing is appended meanwhile.
func (j *journal) rewrite(recs []record) error {
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	tmp := filepath.Join(j.dir, journalTemp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("inproc: rewrite journal %s: %w", j.dir, err)
	}
	w := bufio.NewWriter(f)
	var size int64
	for _, r := range recs {
		n, _ := w.Write(frame(r))
		size += int64(n)
	}
	err = w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(j.dir, journalFile))
	}
	if err == nil {
		err = syncDir(j.dir)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("inproc: rewrite journal %s: %w", j.dir, err)
	}
	if j.f != nil {
		j.f.Close()
	}
	// f was opened write-only at offset 0 and has written size bytes: appends continue at its end.
	j.f, j.size = f, size
	j.synced = j.seq
	return nil
}

// close syncs and closes the file and releases the directory's lock.
func (j *journal) close() error {
	j.syncMu.Lock()
	defer j.syncMu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	var err error
	if j.f != nil {
		err = j.f.Sync()
		if cerr := j.f.Close(); err == nil {
			err = cerr
		}
		j.f = nil
		if err == nil {
			j.synced = j.seq
		}
	}
	j.unlock()
	if err != nil {
		return fmt.Errorf("inproc: close journal %s: %w", j.dir, err)
	}
	return nil
}

func (j *journal) unlock() {
	if j.lock != nil {
		j.lock.Close() // closing the descriptor releases the flock
		j.lock = nil
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
