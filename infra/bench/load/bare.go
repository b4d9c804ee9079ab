package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/google/uuid"

	"github.com/creatorstrategy/css/shared/store"
)

// fixture is one answer the bare server gives: the exact bytes the real service answered with.
type fixture struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	BodyFile    string `json:"bodyFile"` // relative to the fixtures file
	// Write makes the handler store the request body durably before it answers, as the service's write
	// does (one transaction of the item and a counter, waiting for the fsync), when a table is given.
	Write bool `json:"write,omitempty"`
}

// bareHandler is the baseline: a plain net/http handler that reads the request and answers fixed bytes,
// with nothing between the socket and the bytes but, for a fixture marked write, the same durable write
// the service makes to table (nil: none).
func bareHandler(fixturesPath string, table store.Table) (http.Handler, error) {
	raw, err := os.ReadFile(fixturesPath)
	if err != nil {
		return nil, err
	}
	var fixtures []fixture
	if err := json.Unmarshal(raw, &fixtures); err != nil {
		return nil, fmt.Errorf("%s: %w", fixturesPath, err)
	}
	if len(fixtures) == 0 {
		return nil, fmt.Errorf("%s: no fixtures", fixturesPath)
	}
	mux := http.NewServeMux()
	for _, f := range fixtures {
		path := f.BodyFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(fixturesPath), path)
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("fixture %s %s: %w", f.Method, f.Path, err)
		}
		if f.Status < 100 || f.Status > 599 || f.Method == "" || f.Path == "" {
			return nil, fmt.Errorf("fixture %s %s: needs method, path and a status", f.Method, f.Path)
		}
		status, contentType, length := f.Status, f.ContentType, strconv.Itoa(len(body))
		write := f.Write && table != nil
		mux.HandleFunc(f.Method+" "+f.Path, func(w http.ResponseWriter, r *http.Request) {
			// Read the request like the service must, so that both sides do the same I/O.
			in, _ := io.ReadAll(r.Body)
			if write {
				if err := durableWrite(r.Context(), table, in); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
			}
			h := w.Header()
			h.Set("Content-Type", contentType)
			h.Set("Content-Length", length)
			w.WriteHeader(status)
			_, _ = w.Write(body)
		})
	}
	return mux, nil
}

// durableWrite stores data as a new item of one partition with that partition's counter, in one
// transaction that returns once it is on disk: the shape of the service's POST /notes (the note and the
// channel's note counter), through the same table adapter with the same sync settings.
func durableWrite(ctx context.Context, table store.Table, data []byte) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	return table.Write(ctx,
		store.Put(store.Item{Key: store.Key{PK: "CH#bare", SK: "NOTE#" + id.String()}, Data: data}, store.IfNotExists),
		store.Incr(store.Key{PK: "CH#bare", SK: "COUNT#notes"}, 1, 0))
}
