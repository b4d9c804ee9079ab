package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/config"
)

const devKey = "sk-css-0123456789abcdef0123456789abcdef"

// freePort returns a free loopback port: the first free one of CSS_TEST_PORTS ("from-to") when it is set,
// so engineers sharing a machine keep to their ranges; any otherwise.
func freePort(t testing.TB) string {
	t.Helper()
	var from, to int
	if _, err := fmt.Sscanf(os.Getenv("CSS_TEST_PORTS"), "%d-%d", &from, &to); err == nil {
		for p := from; p <= to; p++ {
			if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
				ln.Close()
				return fmt.Sprint(p)
			}
		}
		t.Fatalf("no free port in CSS_TEST_PORTS %s", os.Getenv("CSS_TEST_PORTS"))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// start runs the local stack until the returned stop is called; stop waits for run to return.
func start(t testing.TB, env map[string]string) (base string, console *syncBuffer, stop func() error) {
	t.Helper()
	port := freePort(t)
	t.Setenv("PORT", port)
	for k, v := range env {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	console = &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, slog.New(slog.DiscardHandler), console) }()
	base = "http://127.0.0.1:" + port
	for i := 0; ; i++ {
		if r, err := http.Get(base + "/api/v1/health"); err == nil {
			r.Body.Close()
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the local stack stopped: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return base, console, sync.OnceValue(func() error { cancel(); return <-done })
}

func call(t testing.TB, method, url, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error() // refused during shutdown: never acknowledged
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestDevKeysAndDurableWrites(t *testing.T) {
	data := t.TempDir()
	other := "sk-css-fedcba9876543210fedcba9876543210"
	env := map[string]string{"CSS_DATA_DIR": data, "CSS_DEV_API_KEYS": devKey + "," + other}
	base, console, stop := start(t, env)
	// Each key's channel is printed with the key's prefix, never the key.
	out := console.String()
	if strings.Contains(out, devKey) || strings.Contains(out, other) {
		t.Errorf("a development key was printed: %q", out)
	}
	for _, key := range []string{devKey, other} {
		_, me := call(t, "GET", base+"/api/v1/me", key, "")
		var m struct{ ChannelID string }
		if err := json.Unmarshal([]byte(me), &m); err != nil || m.ChannelID == "" {
			t.Fatalf("GET /me: %s", me)
		}
		if want := key[:11] + "…  channel " + m.ChannelID; !strings.Contains(out, want) {
			t.Errorf("console %q lacks %q", out, want)
		}
	}
	// Acknowledged writes, some in flight when the stop comes.
	var wg sync.WaitGroup
	acked := make(chan string, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, body := call(t, "POST", base+"/api/v1/notes", devKey, fmt.Sprintf(`{"category":"general","content":"note %d"}`, i))
			if status == 201 {
				acked <- body
			}
		}()
		if i == 30 {
			go stop()
		}
	}
	wg.Wait()
	close(acked)
	n := len(acked)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// Each key has its own channel; after a restart every acknowledged note is there.
	base, _, stop = start(t, env)
	defer stop()
	_, body := call(t, "GET", base+"/api/v1/notes", devKey, "")
	if want := fmt.Sprintf(`"total":%d`, n); !strings.Contains(body, want) {
		t.Errorf("after restart: %s, want %s (acknowledged)", body, want)
	}
	if _, body := call(t, "GET", base+"/api/v1/notes", other, ""); !strings.Contains(body, `"total":0`) {
		t.Errorf("the second dev key shares a channel: %s", body)
	}
}

func TestFirstStartPrintsOneKey(t *testing.T) {
	data := t.TempDir()
	base, console, stop := start(t, map[string]string{"CSS_DATA_DIR": data})
	out := console.String()
	i := strings.Index(out, "sk-css-")
	if i < 0 {
		t.Fatalf("no key printed: %q", out)
	}
	key := out[i : i+39]
	if status, _ := call(t, "GET", base+"/api/v1/my-videos", key, ""); status != 200 {
		t.Errorf("the printed key answers %d", status)
	}
	stop()
	_, console, stop = start(t, map[string]string{"CSS_DATA_DIR": data})
	defer stop()
	if strings.Contains(console.String(), "sk-css-") {
		t.Errorf("the second start printed a key again: %q", console.String())
	}
}

func TestBadDevKeyStopsTheStart(t *testing.T) {
	t.Setenv("CSS_DATA_DIR", t.TempDir())
	t.Setenv("CSS_DEV_API_KEYS", "not-a-key")
	t.Setenv("PORT", freePort(t))
	if err := run(context.Background(), slog.New(slog.DiscardHandler), io.Discard); err == nil {
		t.Fatal("a malformed CSS_DEV_API_KEYS entry was accepted")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOldBoltFileIsNamed: a data folder from before the Pebble store still holds css.db, which is not read;
// the stack says so instead of seeming to have lost the data.
func TestOldBoltFileIsNamed(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "css.db"), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CSS_DATA_DIR", data)
	cfg, err := config.FromEnv(config.Development)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	s, err := open(t.Context(), cfg, config.Logger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(logs.String(), `"level":"WARN"`) || !strings.Contains(logs.String(), "css.db") {
		t.Errorf("no warning about css.db: %s", logs.String())
	}
}

// listen runs newServer(h, to) on a loopback port and returns its address.
func listen(t *testing.T, h http.Handler, to timeouts) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(h, to)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedByServer reads conn until the server closes it; it fails the test if that has not happened
// within limit (a bound far above the timeouts under test, so it only catches a connection held for good).
func closedByServer(t *testing.T, conn net.Conn, limit time.Duration) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server still held the connection after %v", limit)
	}
}

// TestTrickledBodyCannotHoldAConnection: a client that sends a body a byte at a time, forever, is cut off
// once the read timeout has passed.
func TestTrickledBodyCannotHoldAConnection(t *testing.T) {
	addr := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}), timeouts{readHeader: time.Second, read: 200 * time.Millisecond, write: time.Second, idle: time.Second})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /api/v1/notes HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	closedByServer(t, conn, 10*time.Second)
}

// TestIdleConnectionIsClosed: a keep-alive connection that sends nothing more is closed after the idle
// timeout; so is one that never finishes its request header.
func TestIdleConnectionIsClosed(t *testing.T) {
	to := timeouts{readHeader: 200 * time.Millisecond, read: time.Second, write: time.Second, idle: 200 * time.Millisecond}
	addr := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), to)

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if _, err := io.WriteString(idle, "GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(idle), nil)
	if err != nil || resp.StatusCode != 200 || resp.Close {
		t.Fatalf("first request: %v, %v", resp, err)
	}
	closedByServer(t, idle, 10*time.Second)

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := io.WriteString(slow, "GET /api/v1/health HTTP/1.1\r\nHost:"); err != nil {
		t.Fatal(err)
	}
	closedByServer(t, slow, 10*time.Second)
}

// TestDefaultTimeouts: every timeout is set, and a generation's 25 s wait fits in the write timeout
// after a body read at the slowest the read timeout allows.
func TestDefaultTimeouts(t *testing.T) {
	d := defaultTimeouts
	if d.readHeader <= 0 || d.read < d.readHeader || d.idle <= 0 || d.write <= d.read+25*time.Second {
		t.Errorf("timeouts %+v: want all set, and write > read + 25 s", d)
	}
	srv := newServer(nil, d)
	if srv.ReadHeaderTimeout != d.readHeader || srv.ReadTimeout != d.read || srv.WriteTimeout != d.write || srv.IdleTimeout != d.idle {
		t.Errorf("newServer does not apply the timeouts: %+v", srv)
	}
}

// Behind a proxy, CSS_PUBLIC_URL is where clients reach the stack: the pictures' URLs start with it.
func TestFilesBehindAPublicURL(t *testing.T) {
	t.Setenv("CSS_DATA_DIR", t.TempDir())
	t.Setenv("CSS_PUBLIC_URL", "https://css.example.com/")
	cfg, err := config.FromEnv(config.Development)
	if err != nil {
		t.Fatal(err)
	}
	s, err := open(t.Context(), cfg, config.Logger(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key, err := ai.NewImageKey("0193a7c4-5b1e-7f00-8000-000000000001", "image/png")
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.images.Put(t.Context(), key, ai.Image{Data: []byte("\x89PNG picture"), ContentType: "image/png"})
	if want := "https://css.example.com/files/" + key; err != nil || u != want {
		t.Errorf("URL %s, %v; want %s", u, err, want)
	}
}

// Generated pictures are stored under the data folder and served at /files/ without credentials; the API
// beside them still asks for them.
func TestFilesAreServed(t *testing.T) {
	data := t.TempDir()
	t.Setenv("CSS_DATA_DIR", data)
	t.Setenv("PORT", "8123")
	cfg, err := config.FromEnv(config.Development)
	if err != nil {
		t.Fatal(err)
	}
	s, err := open(t.Context(), cfg, config.Logger(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key, err := ai.NewImageKey("0193a7c4-5b1e-7f00-8000-000000000001", "image/png")
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.images.Put(t.Context(), key, ai.Image{Data: []byte("\x89PNG picture"), ContentType: "image/png"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://127.0.0.1:8123/files/" + key; u != want {
		t.Errorf("URL %s, want %s", u, want)
	}
	if _, err := os.Stat(filepath.Join(data, "images", filepath.FromSlash(strings.TrimPrefix(key, "images/")))); err != nil {
		t.Errorf("not under the data folder: %v", err)
	}
	base := "http://" + listen(t, s.handler, defaultTimeouts)
	for _, tc := range []struct {
		path   string
		status int
		ctype  string
	}{
		{"/files/" + key, 200, "image/png"},
		{"/files/images/x/y.png", 404, "application/json"},
		{"/files/jwt-secret", 404, "application/json"},
		{"/api/v1/my-videos", 401, "application/json"},
		{"/api/v1/health", 200, "application/json"},
	} {
		resp, err := http.Get(base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.ctype) {
			t.Errorf("GET %s: %d %s %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if tc.status == 200 && strings.HasPrefix(tc.path, "/files/") && string(body) != "\x89PNG picture" {
			t.Errorf("GET %s: %q", tc.path, body)
		}
	}
}
