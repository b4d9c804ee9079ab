package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
)

// fixture is one answer the bare server gives: the exact bytes the real service answered with.
type fixture struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	BodyFile    string `json:"bodyFile"` // relative to the fixtures file
}

// bareHandler is the baseline: a plain net/http handler that reads the request and answers fixed bytes,
// with nothing between the socket and the bytes.
func bareHandler(fixturesPath string) (http.Handler, error) {
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
		mux.HandleFunc(f.Method+" "+f.Path, func(w http.ResponseWriter, r *http.Request) {
			// Read the request like the service must, so that both sides do the same I/O.
			_, _ = io.Copy(io.Discard, r.Body)
			h := w.Header()
			h.Set("Content-Type", contentType)
			h.Set("Content-Length", length)
			w.WriteHeader(status)
			_, _ = w.Write(body)
		})
	}
	return mux, nil
}
