package s3images

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/creatorstrategy/css/shared/ai"
)

// object is what the loopback S3 keeps of one PutObject.
type object struct {
	data          []byte
	header        http.Header
	contentLength int64
}

// fakeS3 speaks the part of S3's REST wire protocol the store uses, path-style: PUT /{bucket}/{key}
// (PutObject) and GET /{bucket}/{key} (a presigned GetObject). errCode, when set, answers every PUT with
// that S3 error.
type fakeS3 struct {
	t       *testing.T
	bucket  string
	mu      sync.Mutex
	objects map[string]object
	puts    int
	errCode string
	errHTTP int
	srv     *httptest.Server
}

func newFakeS3(t *testing.T, bucket string) *fakeS3 {
	f := &fakeS3{t: t, bucket: bucket, objects: map[string]object{}}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket != f.bucket {
		f.s3Error(w, http.StatusNotFound, "NoSuchBucket")
		return
	}
	switch r.Method {
	case http.MethodPut:
		f.mu.Lock()
		f.puts++
		f.mu.Unlock()
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") {
			f.s3Error(w, http.StatusForbidden, "AccessDenied")
			return
		}
		if f.errCode != "" {
			f.s3Error(w, f.errHTTP, f.errCode)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			f.t.Errorf("read body: %v", err)
		}
		// Over plain HTTP the SDK sends the bytes as they are (no aws-chunked encoding, no trailer).
		if r.Header.Get("Content-Encoding") != "" {
			f.t.Errorf("PUT %s: Content-Encoding %q", key, r.Header.Get("Content-Encoding"))
		}
		f.mu.Lock()
		f.objects[key] = object{data: body, header: r.Header.Clone(), contentLength: r.ContentLength}
		f.mu.Unlock()
		w.Header().Set("ETag", `"etag"`)
		w.Header().Set("x-amz-server-side-encryption", r.Header.Get("x-amz-server-side-encryption"))
	case http.MethodGet:
		q := r.URL.Query()
		if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" || q.Get("X-Amz-Signature") == "" ||
			!strings.HasPrefix(q.Get("X-Amz-Credential"), "AKIDEXAMPLE/") {
			f.s3Error(w, http.StatusForbidden, "AccessDenied")
			return
		}
		f.mu.Lock()
		o, ok := f.objects[key]
		f.mu.Unlock()
		if !ok {
			f.s3Error(w, http.StatusNotFound, "NoSuchKey")
			return
		}
		w.Header().Set("Content-Type", o.header.Get("Content-Type"))
		w.Write(o.data)
	default:
		f.s3Error(w, http.StatusMethodNotAllowed, "MethodNotAllowed")
	}
}

func (f *fakeS3) s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>no</Message><RequestId>r1</RequestId></Error>`)
}

// client is the real SDK pointed at the loopback S3, path-style, with static credentials.
func (f *fakeS3) client() *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(f.srv.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
	})
}

const channel = "0193a7c4-5b1e-7f00-8000-000000000001"

func TestPutStoresEncryptedAndPresigns(t *testing.T) {
	f := newFakeS3(t, "css-images")
	st := New(f.client(), "css-images")
	ctx := context.Background()
	for _, img := range []ai.Image{
		{Data: []byte("\x89PNG\r\n\x1a\nfake png bytes"), ContentType: "image/png", Model: "offline"},
		{Data: bytes.Repeat([]byte{0xff, 0xd8, 0xff}, 100_000), ContentType: "image/jpeg", Model: "m"},
	} {
		key, err := ai.ImageKey(channel, "0193a7c4-5b1e-7f00-8000-0000000000aa", img.ContentType)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Put(ctx, key, img)
		if err != nil {
			t.Fatal(err)
		}
		o := f.objects[key]
		if !bytes.Equal(o.data, img.Data) || o.contentLength != int64(len(img.Data)) {
			t.Errorf("%s: stored %d bytes, want %d", key, len(o.data), len(img.Data))
		}
		for h, want := range map[string]string{
			"Content-Type":                 img.ContentType,
			"X-Amz-Server-Side-Encryption": "AES256",
			"Cache-Control":                "private, max-age=31536000, immutable",
		} {
			if v := o.header.Get(h); v != want {
				t.Errorf("%s: %s %q, want %q", key, h, v, want)
			}
		}
		if auth := o.header.Get("Authorization"); !strings.Contains(auth, "/us-east-1/s3/aws4_request") {
			t.Errorf("not signed for S3: %q", auth)
		}

		u, err := url.Parse(got)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		if u.Host != strings.TrimPrefix(f.srv.URL, "http://") || u.Path != "/css-images/"+key ||
			q.Get("X-Amz-Expires") != "604800" || q.Get("X-Amz-Signature") == "" {
			t.Errorf("URL %s", got)
		}
		// The URL fetches the picture.
		resp, err := http.Get(got)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(body, img.Data) || resp.Header.Get("Content-Type") != img.ContentType {
			t.Errorf("GET: %d %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
	}
}

func TestRefusedBeforeAnyCall(t *testing.T) {
	f := newFakeS3(t, "css-images")
	st := New(f.client(), "css-images")
	png := ai.Image{Data: []byte("x"), ContentType: "image/png"}
	for name, tc := range map[string]struct {
		key string
		img ai.Image
	}{
		"traversal":               {"images/../secrets/x.png", png},
		"absolute":                {"/images/" + channel + "/a.png", png},
		"outside images/":         {"other/" + channel + "/a.png", png},
		"nested":                  {"images/" + channel + "/a/b.png", png},
		"other extension":         {"images/" + channel + "/a.gif", png},
		"extension not the type":  {"images/" + channel + "/a.jpeg", png},
		"unknown type":            {"images/" + channel + "/a.png", ai.Image{Data: []byte("x"), ContentType: "image/gif"}},
		"no data":                 {"images/" + channel + "/a.png", ai.Image{ContentType: "image/png"}},
		"empty key":               {"", png},
		"encoded slash in the id": {"images/" + channel + "/a%2Fb.png", png},
	} {
		if _, err := st.Put(context.Background(), tc.key, tc.img); !errors.Is(err, ai.ErrFailed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := st.URL(context.Background(), "images/../x.png"); !errors.Is(err, ai.ErrFailed) {
		t.Errorf("URL of a bad key: %v", err)
	}
	if f.puts != 0 {
		t.Errorf("%d PUTs", f.puts)
	}
}

func TestS3ErrorsFail(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		bucket string
	}{
		{http.StatusForbidden, "AccessDenied", "css-images"},
		{http.StatusNotFound, "NoSuchBucket", "another-bucket"},
	} {
		f := newFakeS3(t, "css-images")
		if tc.bucket == "css-images" {
			f.errHTTP, f.errCode = tc.status, tc.code
		}
		st := New(f.client(), tc.bucket)
		key, _ := ai.ImageKey(channel, "id1", "image/png")
		_, err := st.Put(context.Background(), key, ai.Image{Data: []byte("x"), ContentType: "image/png"})
		if !errors.Is(err, ai.ErrFailed) || !strings.Contains(err.Error(), tc.code) {
			t.Errorf("%s: %v", tc.code, err)
		}
	}
}

func TestNewClient(t *testing.T) {
	if _, err := NewClient(""); err == nil {
		t.Error("no region accepted")
	}
	c, err := NewClient("eu-west-1")
	if err != nil || c.Options().Region != "eu-west-1" {
		t.Errorf("%v, %v", c, err)
	}
}
