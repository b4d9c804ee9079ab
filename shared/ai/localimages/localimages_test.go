package localimages

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creatorstrategy/css/shared/ai"
)

const (
	channel = "0193a7c4-5b1e-7f00-8000-000000000001"
	id      = "0123456789abcdef0123456789abcdef"
	// Names a valid key could have, for what is not a stored picture.
	folderName  = "f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0"
	absLinkName = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	relLinkName = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
	missingName = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
)

var pngImage = ai.Image{Data: []byte("\x89PNG\r\n\x1a\n the rest of a picture"), ContentType: "image/png", Model: "offline"}

// stack mounts the handler as functions/local does, beside another handler, and stores into dir.
func stack(t *testing.T, dir string) (*Store, *httptest.Server) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	st, err := New(dir, "http://"+srv.Listener.Addr().String()+"/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mux := http.NewServeMux()
	mux.Handle(PathPrefix, st.Handler())
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return st, srv
}

func put(t *testing.T, st *Store, key string, img ai.Image) string {
	t.Helper()
	u, err := st.Put(context.Background(), key, img)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustKey(t *testing.T, contentType string) string {
	k, err := ai.ImageKey(channel, id, contentType)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestPutThenServe(t *testing.T) {
	dir := t.TempDir()
	st, srv := stack(t, dir)
	jpg := ai.Image{Data: []byte("\xff\xd8\xff a jpeg"), ContentType: "image/jpeg"}
	for _, img := range []ai.Image{pngImage, jpg} {
		key := mustKey(t, img.ContentType)
		u := put(t, st, key, img)
		if want := srv.URL + "/files/" + key; u != want {
			t.Errorf("URL %s, want %s", u, want)
		}
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != string(img.Data) {
			t.Errorf("GET %s: %d, %q", u, resp.StatusCode, body)
		}
		for h, want := range map[string]string{"Content-Type": img.ContentType, "X-Content-Type-Options": "nosniff",
			"Content-Security-Policy": "default-src 'none'; sandbox"} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s: %q, want %q", h, got, want)
			}
		}
	}

	u := srv.URL + "/files/" + mustKey(t, "image/png")
	resp, err := http.Head(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(pngImage.Data)) {
		t.Errorf("HEAD: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Range", "bytes=0-3")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(body) != "\x89PNG" {
		t.Errorf("range: %d %q", resp.StatusCode, body)
	}
}

func TestPermissionsAndAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	// Folders that exist already, too open, are closed.
	if err := os.MkdirAll(filepath.Join(dir, "images", channel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	st, _ := stack(t, dir)
	key := mustKey(t, "image/png")
	put(t, st, key, ai.Image{Data: []byte("first"), ContentType: "image/png"})
	put(t, st, key, pngImage)
	for p, want := range map[string]os.FileMode{
		filepath.Join(dir, "images"):                0o700,
		filepath.Join(dir, "images", channel):       0o700,
		filepath.Join(dir, filepath.FromSlash(key)): 0o600,
	} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: %v, want %v", p, info.Mode().Perm(), want)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(key)))
	if err != nil || string(got) != string(pngImage.Data) {
		t.Errorf("file %q, %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "images", channel))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestOnlyStoredPicturesAreServed(t *testing.T) {
	dir := t.TempDir()
	st, srv := stack(t, dir)
	key := mustKey(t, "image/png")
	put(t, st, key, pngImage)
	chDir := filepath.Join(dir, "images", channel)
	// Things that must never be served: a secret beside the images folder, another kind of file, a
	// folder named like a picture, and links out of the images folder.
	must(t, os.WriteFile(filepath.Join(dir, "jwt-secret"), []byte("secret"), 0o600))
	must(t, os.WriteFile(filepath.Join(chDir, "notes.txt"), []byte("text"), 0o600))
	must(t, os.WriteFile(filepath.Join(chDir, "x.gif"), []byte("GIF89a"), 0o600))
	must(t, os.Mkdir(filepath.Join(chDir, folderName+".png"), 0o700))
	must(t, os.Symlink(filepath.Join(dir, "jwt-secret"), filepath.Join(chDir, absLinkName+".png")))
	must(t, os.Symlink("../../jwt-secret", filepath.Join(chDir, relLinkName+".png")))
	must(t, os.WriteFile(filepath.Join(chDir, "0193a7c4-5b1e-7f00-8000-0000000000aa-thumbnail.png"), []byte("secret"), 0o600))

	for _, p := range []string{
		"/files/images/" + channel + "/" + missingName + ".png",
		"/files/images/" + channel + "/x.gif",
		"/files/images/" + channel + "/notes.txt",
		"/files/images/" + channel + "/" + folderName + ".png",
		"/files/images/" + channel + "/" + absLinkName + ".png",
		"/files/images/" + channel + "/" + relLinkName + ".png",
		// A file named as keys were before they held 128 random bits: not a key any more.
		"/files/images/" + channel + "/0193a7c4-5b1e-7f00-8000-0000000000aa-thumbnail.png",
		"/files/images/" + channel,
		"/files/images/" + channel + "/",
		"/files/images/",
		"/files/",
		"/files/jwt-secret",
		"/files/images/..%2f..%2fjwt-secret",
		"/files/images/" + channel + "/%2e%2e%2f%2e%2e%2fjwt-secret.png",
		"/files/images/" + channel + "/" + id + ".PNG",
		"/files/images/" + channel + "/" + id + ".png%00.gif",
		"/files/images/" + channel + "/" + id + ".png/",
		"/files/images/" + channel + "/" + id + ".png.tmp",
	} {
		t.Run(p, func(t *testing.T) {
			resp, err := http.Get(srv.URL + p)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), "secret") || strings.Contains(string(body), "GIF") {
				t.Fatalf("served %q", body)
			}
			if resp.StatusCode != http.StatusNotFound {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var e struct{ Error, Code string }
			if err := json.Unmarshal(body, &e); err != nil || e.Code != "NOT_FOUND" || e.Error == "" {
				t.Errorf("body %q is not the Error shape", body)
			}
		})
	}

	// ServeMux cleans dot segments before routing (a redirect); the handler refuses them itself too.
	for _, p := range []string{"/files/images/../jwt-secret", "/files/images/" + channel + "/../../jwt-secret"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path = p
		st.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			t.Errorf("%s: %d", p, rec.Code)
		}
	}
}

func TestOtherMethods(t *testing.T) {
	st, _ := stack(t, t.TempDir())
	u := put(t, st, mustKey(t, "image/png"), pngImage)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		req, _ := http.NewRequest(m, u, strings.NewReader("x"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Error, Code string }
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" ||
			json.Unmarshal(body, &e) != nil || e.Code != "VALIDATION_ERROR" {
			t.Errorf("%s: %d %q", m, resp.StatusCode, body)
		}
	}
	// The picture is still there.
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("after the refused methods: %d", resp.StatusCode)
	}
}

func TestPutRefusals(t *testing.T) {
	dir := t.TempDir()
	st, _ := stack(t, dir)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for name, tc := range map[string]struct {
		ctx context.Context
		key string
		img ai.Image
	}{
		"traversal":          {context.Background(), "images/../jwt-secret.png", pngImage},
		"outside images/":    {context.Background(), "other/" + channel + "/" + id + ".png", pngImage},
		"type and extension": {context.Background(), "images/" + channel + "/" + id + ".jpeg", pngImage},
		"gif":                {context.Background(), "images/" + channel + "/" + id + ".gif", ai.Image{Data: []byte("G"), ContentType: "image/gif"}},
		"no data":            {context.Background(), "images/" + channel + "/" + id + ".png", ai.Image{ContentType: "image/png"}},
		"cancelled":          {cancelled, "images/" + channel + "/" + id + ".png", pngImage},
	} {
		if _, err := st.Put(tc.ctx, tc.key, tc.img); !errors.Is(err, ai.ErrFailed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "images"))
	if len(entries) != 0 {
		t.Errorf("written: %v", entries)
	}
}

func TestNewRefusesABadBaseURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://127.0.0.1", "http://", "http://h/?a=1", "http://h/#f", "://x"} {
		if st, err := New(t.TempDir(), u); err == nil {
			st.Close()
			t.Errorf("accepted %q", u)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
