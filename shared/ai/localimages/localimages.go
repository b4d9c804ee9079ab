// Package localimages is the local stack's ImageStore: pictures are files under <data dir>/images, and
// Handler serves them at /files/ on the stack's own address.
//
// The files are served without authentication, as a CDN would serve them: a key's name is 128 random bits
// (ai.NewImageKey), so a URL is as hard to guess as a credential, and it is only ever given to the channel
// that owns it. The cloud serves the same paths (ai/s3images).
package localimages

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/internal/fileroute"
)

// PathPrefix is where Handler expects to be mounted; a key's URL is <base URL>/files/<key>.
const PathPrefix = ai.FilesPath

// Store keeps pictures under <dataDir>/images: folders 0700, files 0600.
type Store struct {
	// root is <dataDir>/images: the files are opened through it, so not even a symbolic link leads a
	// request out of that folder.
	root *os.Root
	base string
}

// name is the file of key (images/<channel>/<name>.<ext>) within the images folder.
func name(key string) string { return strings.TrimPrefix(key, "images/") }

var _ ai.ImageStore = (*Store)(nil)

// New opens the store in dataDir (created if missing). baseURL is the stack's origin as clients reach it,
// e.g. http://127.0.0.1:8080.
func New(dataDir, baseURL string) (*Store, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("local image store: base URL %q: want http(s)://host[:port][/path]", baseURL)
	}
	dir := filepath.Join(dataDir, "images")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("local image store: %w", err)
	}
	// MkdirAll leaves a folder that already existed as it was.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("local image store: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("local image store: %w", err)
	}
	return &Store{root: root, base: strings.TrimSuffix(baseURL, "/")}, nil
}

// Close releases the data folder.
func (s *Store) Close() error { return s.root.Close() }

// Put writes img at <dataDir>/<key> (key is images/<channel>/<name>.<ext>), whole or not at all, and
// returns its URL.
func (s *Store) Put(ctx context.Context, key string, img ai.Image) (string, error) {
	if err := ai.CheckPut(key, img); err != nil {
		return "", fail(err)
	}
	if err := ctx.Err(); err != nil {
		return "", fail(err)
	}
	file := name(key)
	dir := path.Dir(file) // the channel's folder
	if err := s.root.MkdirAll(dir, 0o700); err != nil {
		return "", fail(err)
	}
	if err := s.root.Chmod(dir, 0o700); err != nil {
		return "", fail(err)
	}
	var suffix [8]byte
	rand.Read(suffix[:])
	tmp := file + "." + hex.EncodeToString(suffix[:]) + ".tmp"
	if err := s.write(tmp, img.Data); err != nil {
		s.root.Remove(tmp)
		return "", fail(err)
	}
	if err := s.root.Rename(tmp, file); err != nil {
		s.root.Remove(tmp)
		return "", fail(err)
	}
	return ai.ImageURL(s.base, key), nil
}

func (s *Store) write(name string, data []byte) error {
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fail(err error) error {
	return &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("local image store: %w", err)}
}

// Handler serves GET and HEAD of PathPrefix + key for the keys ImageKey makes, with their content type,
// ranges and conditional requests. Any other path is 404 (so nothing outside <dataDir>/images, no other
// file type, nothing via a symbolic link out of that folder), any other method 405; both in the API's
// Error shape.
func (s *Store) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := fileroute.Key(w, r)
		if !ok {
			return
		}
		f, err := s.root.Open(name(key))
		if err != nil {
			fileroute.NotFound(w)
			return
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil || !info.Mode().IsRegular() {
			fileroute.NotFound(w)
			return
		}
		h := w.Header()
		h.Set("Content-Type", ai.ImageContentType(key))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
		// A key is never reused for another picture.
		h.Set("Cache-Control", "private, max-age=31536000, immutable")
		http.ServeContent(w, r, "", info.ModTime(), f)
	})
}
