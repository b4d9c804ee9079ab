package s3images

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/config"
	"github.com/creatorstrategy/css/shared/testkit/s3test"
)

const (
	accessKey = "AKIDEXAMPLE"
	secretKey = "secret"
	region    = "us-east-1"
	bucket    = "css-images"
	channel   = "0193a7c4-5b1e-7f00-8000-000000000001"
	public    = "https://api.example.com"
)

var (
	creds     = credentials.NewStaticCredentialsProvider(accessKey, secretKey, "session-token")
	credsUsed = aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey, SessionToken: "session-token"}
)

// fake is the loopback S3 (s3test) with the package under test wired to it.
type fake struct{ *s3test.Server }

func newFakeS3(t *testing.T) fake { return fake{s3test.Start(t, bucket, region, credsUsed)} }

// client is the real SDK pointed at the loopback S3, path-style, with static credentials.
func (f fake) client() *s3.Client {
	return s3.New(s3.Options{Region: region, BaseEndpoint: aws.String(f.URL), UsePathStyle: true, Credentials: creds})
}

func (f fake) store(t *testing.T) *Store {
	st, err := New(f.client(), bucket, public)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (f fake) files(t *testing.T, now func() time.Time) *Files {
	t.Helper()
	fs, err := NewFiles(FilesConfig{Bucket: bucket, Region: region, Endpoint: f.URL, Credentials: creds, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestPutStoresEncryptedAndReturnsTheLastingURL(t *testing.T) {
	f := newFakeS3(t)
	st := f.store(t)
	for _, img := range []ai.Image{
		{Data: []byte("\x89PNG\r\n\x1a\nfake png bytes"), ContentType: "image/png", Model: "offline"},
		{Data: bytes.Repeat([]byte{0xff, 0xd8, 0xff}, 100_000), ContentType: "image/jpeg", Model: "m"},
	} {
		key, err := ai.NewImageKey(channel, img.ContentType)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Put(context.Background(), key, img)
		if err != nil {
			t.Fatal(err)
		}
		if want := public + "/files/" + key; got != want {
			t.Errorf("URL %s, want %s", got, want)
		}
		o, _ := f.Object(key)
		if !bytes.Equal(o.Data, img.Data) || o.ContentLength != int64(len(img.Data)) {
			t.Errorf("%s: stored %d bytes, want %d", key, len(o.Data), len(img.Data))
		}
		for h, want := range map[string]string{
			"Content-Type":                 img.ContentType,
			"X-Amz-Server-Side-Encryption": "AES256",
			"Cache-Control":                "private, max-age=31536000, immutable",
		} {
			if v := o.Header.Get(h); v != want {
				t.Errorf("%s: %s %q, want %q", key, h, v, want)
			}
		}
	}
}

func TestNewNeedsAPublicURL(t *testing.T) {
	if _, err := New(newFakeS3(t).client(), bucket, ""); err == nil {
		t.Error("a store without a public URL")
	}
}

func TestRefusedBeforeAnyCall(t *testing.T) {
	f := newFakeS3(t)
	st := f.store(t)
	const name = "0123456789abcdef0123456789abcdef"
	png := ai.Image{Data: []byte("x"), ContentType: "image/png"}
	for label, tc := range map[string]struct {
		key string
		img ai.Image
	}{
		"traversal":               {"images/../secrets/x.png", png},
		"absolute":                {"/images/" + channel + "/" + name + ".png", png},
		"outside images/":         {"other/" + channel + "/" + name + ".png", png},
		"nested":                  {"images/" + channel + "/a/" + name + ".png", png},
		"other extension":         {"images/" + channel + "/" + name + ".gif", png},
		"extension not the type":  {"images/" + channel + "/" + name + ".jpeg", png},
		"unknown type":            {"images/" + channel + "/" + name + ".png", ai.Image{Data: []byte("x"), ContentType: "image/gif"}},
		"no data":                 {"images/" + channel + "/" + name + ".png", ai.Image{ContentType: "image/png"}},
		"empty key":               {"", png},
		"a name of 64 bits":       {"images/" + channel + "/0123456789abcdef.png", png},
		"encoded slash in the id": {"images/" + channel + "/a%2Fb.png", png},
	} {
		if _, err := st.Put(context.Background(), tc.key, tc.img); !errors.Is(err, ai.ErrFailed) {
			t.Errorf("%s: %v", label, err)
		}
	}
	if _, err := f.files(t, time.Now).Presign(context.Background(), "images/../x.png"); !errors.Is(err, ai.ErrFailed) {
		t.Errorf("Presign of a bad key: %v", err)
	}
	if calls := f.Calls(); len(calls) != 0 {
		t.Errorf("calls %v", calls)
	}
}

// S3's refusals fail the put, and the error names the channel's folder but never the key (the capability).
func TestS3ErrorsFail(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		bucket string
	}{
		{http.StatusForbidden, "AccessDenied", bucket},
		{http.StatusNotFound, "NoSuchBucket", "another-bucket"},
	} {
		f := newFakeS3(t)
		if tc.bucket == bucket {
			f.FailWith(tc.status, tc.code)
		}
		st, _ := New(f.client(), tc.bucket, public)
		key, _ := ai.NewImageKey(channel, "image/png")
		_, err := st.Put(context.Background(), key, ai.Image{Data: []byte("x"), ContentType: "image/png"})
		if !errors.Is(err, ai.ErrFailed) || !strings.Contains(err.Error(), tc.code) || !strings.Contains(err.Error(), "images/"+channel+"/") {
			t.Errorf("%s: %v", tc.code, err)
		}
		if name := strings.TrimSuffix(key[strings.LastIndexByte(key, '/')+1:], ".png"); strings.Contains(err.Error(), name) {
			t.Errorf("%s: the error names the key: %v", tc.code, err)
		}
	}
}

func TestNewClient(t *testing.T) {
	if _, err := NewClient("", ""); err == nil {
		t.Error("no region accepted")
	}
	c, err := NewClient("eu-west-1", "")
	if err != nil || c.Options().Region != "eu-west-1" || c.Options().BaseEndpoint != nil || c.Options().UsePathStyle {
		t.Errorf("%+v, %v", c.Options(), err)
	}
	c, err = NewClient("eu-west-1", "http://127.0.0.1:9000")
	if err != nil || aws.ToString(c.Options().BaseEndpoint) != "http://127.0.0.1:9000" || !c.Options().UsePathStyle {
		t.Errorf("%+v, %v", c.Options(), err)
	}
}

// get requests path from h without following redirects.
func get(t *testing.T, h http.Handler, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

// A stored picture's lasting URL answers 302 to a presigned GET that fetches it, the same link within a
// signing window and a new one in the next, each valid long after the redirect may be cached.
func TestFilesRedirectToAPresignedLink(t *testing.T) {
	f := newFakeS3(t)
	img := ai.Image{Data: []byte("\x89PNG picture"), ContentType: "image/png"}
	key, _ := ai.NewImageKey(channel, img.ContentType)
	u, err := f.store(t).Put(context.Background(), key, img)
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimPrefix(u, public)
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 10, 7, 30, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f.SetNow(clock)
	h := f.files(t, clock).Handler()

	links := map[string]bool{}
	for i, at := range []time.Time{now, now.Add(2 * time.Minute), now.Add(3 * time.Minute)} {
		mu.Lock()
		now = at
		mu.Unlock()
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			resp := get(t, h, method, path)
			loc := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusFound || resp.Header.Get("Cache-Control") != "private, max-age=300" {
				t.Fatalf("%s at %s: %d %v", method, at, resp.StatusCode, resp.Header)
			}
			links[loc] = true
			lu, _ := url.Parse(loc)
			q := lu.Query()
			signedAt := at.Truncate(SignWindow)
			if lu.Path != "/"+bucket+"/"+key || q.Get("X-Amz-Expires") != "1200" || q.Get("X-Amz-Date") != signedAt.Format("20060102T150405Z") ||
				q.Get("X-Amz-Security-Token") != "session-token" {
				t.Errorf("%s at %s: Location %s", method, at, loc)
			}
			// The link fetches the picture, at once and up to its last second (a cached redirect followed
			// RedirectMaxAge later is well inside it).
			for _, later := range []time.Duration{0, RedirectMaxAge, LinkLifetime - SignWindow} {
				mu.Lock()
				now = at.Add(later)
				mu.Unlock()
				got, err := http.Get(loc)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(got.Body)
				got.Body.Close()
				if got.StatusCode != 200 || !bytes.Equal(body, img.Data) || got.Header.Get("Content-Type") != "image/png" {
					t.Errorf("GET of the link %s later: %d %q", later, got.StatusCode, body)
				}
			}
			mu.Lock()
			now = at
			mu.Unlock()
		}
		if want := map[int]int{0: 1, 1: 1, 2: 2}[i]; len(links) != want {
			t.Errorf("after %s: %d links, want %d (one per signing window)", at, len(links), want)
		}
	}
	// Past its lifetime a link no longer fetches anything.
	mu.Lock()
	now = now.Truncate(SignWindow).Add(LinkLifetime + time.Minute)
	mu.Unlock()
	for loc := range links {
		got, err := http.Get(loc)
		if err != nil {
			t.Fatal(err)
		}
		got.Body.Close()
		if got.StatusCode != http.StatusForbidden {
			t.Errorf("an expired link: %d", got.StatusCode)
		}
	}
}

// The link is the very URL the S3 client's presigner makes for the same object, credentials and time, in
// both addressing styles.
func TestPresignAsTheS3ClientDoes(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 5, 0, 0, time.UTC)
	key, _ := ai.NewImageKey(channel, "image/jpeg")
	for _, tc := range []struct {
		name, endpoint, bucket string
		pathStyle              bool
		host                   string
	}{
		{"virtual-hosted", "", bucket, false, bucket + ".s3." + region + ".amazonaws.com"},
		{"path-style endpoint", "http://127.0.0.1:9000", bucket, true, "127.0.0.1:9000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := NewFiles(FilesConfig{Bucket: tc.bucket, Region: region, Endpoint: tc.endpoint, Credentials: creds, Now: func() time.Time { return at }})
			if err != nil {
				t.Fatal(err)
			}
			ours, err := fs.Presign(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			client := s3.New(s3.Options{Region: region, Credentials: creds, UsePathStyle: tc.pathStyle}, func(o *s3.Options) {
				if tc.endpoint != "" {
					o.BaseEndpoint = aws.String(tc.endpoint)
				}
			})
			theirs, err := s3.NewPresignClient(client, func(o *s3.PresignOptions) {
				o.Expires = LinkLifetime
				o.Presigner = atTime{v4.NewSigner(), at}
			}).PresignGetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(tc.bucket), Key: aws.String(key)})
			if err != nil {
				t.Fatal(err)
			}
			ou, _ := url.Parse(ours)
			tu, _ := url.Parse(theirs.URL)
			oq, tq := ou.Query(), tu.Query()
			tq.Del("x-id") // the client's operation marker, not part of what S3 checks
			if ou.Host != tc.host || ou.Host != tu.Host || ou.Path != tu.Path || ou.Scheme != tu.Scheme {
				t.Errorf("ours %s\ntheirs %s", ours, theirs.URL)
			}
			for k := range tq {
				if oq.Get(k) != tq.Get(k) {
					t.Errorf("%s: ours %q, theirs %q", k, oq.Get(k), tq.Get(k))
				}
			}
			if len(oq) != len(tq) {
				t.Errorf("query ours %v\ntheirs %v", oq, tq)
			}
		})
	}
}

// atTime is the v4 presigner at a fixed signing time.
type atTime struct {
	s  *v4.Signer
	at time.Time
}

func (p atTime) PresignHTTP(ctx context.Context, c aws.Credentials, r *http.Request, payloadHash, service, region string,
	_ time.Time, opts ...func(*v4.SignerOptions)) (string, http.Header, error) {
	// The marker x-id is signed by the client: drop it so the signature compares with ours.
	q := r.URL.Query()
	q.Del("x-id")
	r.URL.RawQuery = q.Encode()
	return p.s.PresignHTTP(ctx, c, r, payloadHash, service, region, p.at, opts...)
}

// A key that is not stored is 404 whether S3 says 403 (no s3:ListBucket) or 404; a path that is not a key
// is 404 without asking S3; other methods 405; all in the Error shape. S3 failing is a 500 that names no
// key.
func TestFilesRefusals(t *testing.T) {
	const name = "0123456789abcdef0123456789abcdef"
	for _, missing404 := range []bool{false, true} {
		f := newFakeS3(t)
		if missing404 {
			f.Missing404()
		}
		h := f.files(t, time.Now).Handler()
		for _, tc := range []struct {
			method, path string
			status       int
			asksS3       bool
		}{
			{"GET", "/files/images/" + channel + "/" + name + ".png", 404, true},
			{"HEAD", "/files/images/" + channel + "/" + name + ".jpeg", 404, true},
			{"GET", "/files/images/" + channel + "/" + name + ".gif", 404, false},
			{"GET", "/files/images/" + channel + "/" + strings.ToUpper(name) + ".png", 404, false},
			{"GET", "/files/images/" + channel + "/" + name[:31] + ".png", 404, false},
			{"GET", "/files/images/" + channel + "/0193a7c4-5b1e-7f00-8000-0000000000aa-thumbnail.png", 404, false},
			{"GET", "/files/images/" + channel + "/../" + name + ".png", 404, false},
			{"GET", "/files/images/%2e%2e/" + name + ".png", 404, false},
			{"GET", "/files/other/" + channel + "/" + name + ".png", 404, false},
			{"GET", "/files/images/" + channel + "/x/" + name + ".png", 404, false},
			{"GET", "/files/images/" + channel + "/", 404, false},
			{"GET", "/files/", 404, false},
			{"GET", "/files/jwt-secret", 404, false},
			{"GET", "/elsewhere/images/" + channel + "/" + name + ".png", 404, false},
			{"POST", "/files/images/" + channel + "/" + name + ".png", 405, false},
			{"DELETE", "/files/images/" + channel + "/" + name + ".png", 405, false},
			{"PUT", "/files/images/" + channel + "/" + name + ".png", 405, false},
		} {
			before := len(f.Calls())
			resp := get(t, h, tc.method, tc.path)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || resp.Header.Get("Location") != "" || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s (S3 404 %v): %d %v %s", tc.method, tc.path, missing404, resp.StatusCode, resp.Header, body)
			}
			code := map[int]string{404: `"code":"NOT_FOUND"`, 405: `"code":"VALIDATION_ERROR"`}[tc.status]
			if !strings.Contains(string(body), code) {
				t.Errorf("%s %s: body %s", tc.method, tc.path, body)
			}
			if asked := len(f.Calls()) > before; asked != tc.asksS3 {
				t.Errorf("%s %s: asked S3 %v, want %v", tc.method, tc.path, asked, tc.asksS3)
			}
		}
	}

	f := newFakeS3(t)
	f.FailWith(http.StatusServiceUnavailable, "SlowDown")
	var logs bytes.Buffer
	fs, err := NewFiles(FilesConfig{Bucket: bucket, Region: region, Endpoint: f.URL, Credentials: creds,
		Log: slogTo(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	resp := get(t, fs.Handler(), "GET", "/files/images/"+channel+"/"+name+".png")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || !strings.Contains(string(body), `"code":"INTERNAL"`) || strings.Contains(string(body), name) {
		t.Errorf("S3 down: %d %s", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "images/"+channel+"/") || strings.Contains(logs.String(), name) {
		t.Errorf("log %s", logs.String())
	}
}

func TestBucketURL(t *testing.T) {
	for _, tc := range []struct {
		bucket, region, endpoint, want string
	}{
		{"css-images-1a2b", "eu-west-1", "", "https://css-images-1a2b.s3.eu-west-1.amazonaws.com/"},
		{"css-images-1a2b", "cn-north-1", "", "https://css-images-1a2b.s3.cn-north-1.amazonaws.com.cn/"},
		{"my.images", "us-east-2", "", "https://s3.us-east-2.amazonaws.com/my.images/"},
		{"css-images", "us-east-1", "http://127.0.0.1:9000", "http://127.0.0.1:9000/css-images/"},
		{"css-images", "us-east-1", "http://127.0.0.1:9000/", "http://127.0.0.1:9000/css-images/"},
	} {
		u, err := bucketURL(tc.bucket, tc.region, tc.endpoint)
		if err != nil || u.String() != tc.want {
			t.Errorf("bucketURL(%q, %q, %q) = %v, %v; want %s", tc.bucket, tc.region, tc.endpoint, u, err, tc.want)
		}
	}
	if _, err := NewFiles(FilesConfig{Region: region}); err == nil {
		t.Error("files without a bucket")
	}
	if _, err := NewFiles(FilesConfig{Bucket: bucket}); err == nil {
		t.Error("files without a region")
	}
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

// The utility function's handler: over the configured bucket (and S3 endpoint), or finding nothing
// without one.
func TestFilesHandler(t *testing.T) {
	f := newFakeS3(t)
	img := ai.Image{Data: []byte("\x89PNG picture"), ContentType: "image/png"}
	key, _ := ai.NewImageKey(channel, img.ContentType)
	if _, err := f.store(t).Put(context.Background(), key, img); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", accessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secretKey)
	t.Setenv("AWS_SESSION_TOKEN", "session-token")
	for _, tc := range []struct {
		bucket string
		status int
	}{{bucket, http.StatusFound}, {"", http.StatusNotFound}} {
		h, err := FilesHandler(config.Config{ImagesBucket: tc.bucket, Region: region, S3Endpoint: f.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp := get(t, h, "GET", "/files/"+key); resp.StatusCode != tc.status {
			t.Errorf("bucket %q: %d", tc.bucket, resp.StatusCode)
		}
		if resp := get(t, h, "POST", "/files/"+key); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("bucket %q, POST: %d", tc.bucket, resp.StatusCode)
		}
	}
}
