// Package s3test is a loopback server speaking the part of S3's REST protocol the image store and the
// /files/ handler use, path-style: PUT /{bucket}/{key} (PutObject), HEAD /{bucket}/{key} (signed in
// headers) and GET /{bucket}/{key} (a presigned URL). It checks every SigV4 signature. Test support: only
// tests import it.
package s3test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/creatorstrategy/css/shared/testkit/sigv4test"
)

// Object is what the server keeps of one PutObject.
type Object struct {
	Data          []byte
	Header        http.Header
	ContentLength int64
}

// Server is one bucket on loopback. Like S3 for a role without s3:ListBucket, it answers a missing object
// 403 (with Missing404, 404).
type Server struct {
	URL    string // the endpoint (CSS_S3_ENDPOINT)
	Bucket string
	Region string
	Creds  aws.Credentials

	t          testing.TB
	mu         sync.Mutex
	objects    map[string]Object
	calls      []string // "METHOD key"
	now        func() time.Time
	missing404 bool
	errStatus  int
	errCode    string
}

// Start serves bucket in region to requests signed with creds, until the test ends.
func Start(t testing.TB, bucket, region string, creds aws.Credentials) *Server {
	s := &Server{Bucket: bucket, Region: region, Creds: creds, t: t, objects: map[string]Object{}, now: time.Now}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// SetNow sets the server's clock, which judges presigned URLs' lifetimes.
func (s *Server) SetNow(now func() time.Time) { s.mu.Lock(); s.now = now; s.mu.Unlock() }

// Missing404 makes a missing object 404, as S3 answers a role that may list the bucket.
func (s *Server) Missing404() { s.mu.Lock(); s.missing404 = true; s.mu.Unlock() }

// FailWith answers every signed request with that S3 error.
func (s *Server) FailWith(status int, code string) {
	s.mu.Lock()
	s.errStatus, s.errCode = status, code
	s.mu.Unlock()
}

// Object returns what was put under key.
func (s *Server) Object(key string) (Object, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[key]
	return o, ok
}

// Keys are the keys stored.
func (s *Server) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Keys(s.objects))
}

// Calls are the requests received, "METHOD key".
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	s.mu.Lock()
	s.calls = append(s.calls, r.Method+" "+key)
	now, missing404, errStatus, errCode := s.now, s.missing404, s.errStatus, s.errCode
	s.mu.Unlock()
	if bucket != s.Bucket {
		s.error(w, http.StatusNotFound, "NoSuchBucket")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("s3test: read body: %v", err)
	}
	var sc sigv4test.Scope
	if r.URL.Query().Has("X-Amz-Signature") {
		sc, err = sigv4test.VerifyPresigned(r, s.Creds, now())
	} else {
		sc, err = sigv4test.Verify(r, body, s.Creds)
	}
	switch {
	case errors.Is(err, sigv4test.ErrExpired):
		s.error(w, http.StatusForbidden, "AccessDenied")
		return
	case err != nil:
		s.t.Errorf("s3test: %s %s: %v", r.Method, key, err)
		s.error(w, http.StatusForbidden, "SignatureDoesNotMatch")
		return
	case sc.Service != "s3" || sc.Region != s.Region:
		s.t.Errorf("s3test: %s %s signed for %s in %s, want s3 in %s", r.Method, key, sc.Service, sc.Region, s.Region)
		s.error(w, http.StatusForbidden, "AuthorizationHeaderMalformed")
		return
	}
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != "UNSIGNED-PAYLOAD" && h != sha256Hex(body) {
		s.t.Errorf("s3test: %s %s: X-Amz-Content-Sha256 %q is not the body's", r.Method, key, h)
		s.error(w, http.StatusBadRequest, "XAmzContentSHA256Mismatch")
		return
	}
	if errCode != "" {
		s.error(w, errStatus, errCode)
		return
	}
	switch r.Method {
	case http.MethodPut:
		// Over plain HTTP the SDK sends the bytes as they are (no aws-chunked encoding, no trailer).
		if ce := r.Header.Get("Content-Encoding"); ce != "" {
			s.t.Errorf("s3test: PUT %s: Content-Encoding %q", key, ce)
		}
		s.mu.Lock()
		s.objects[key] = Object{Data: body, Header: r.Header.Clone(), ContentLength: r.ContentLength}
		s.mu.Unlock()
		w.Header().Set("ETag", `"etag"`)
	case http.MethodGet, http.MethodHead:
		o, ok := s.Object(key)
		switch {
		case !ok && missing404:
			s.error(w, http.StatusNotFound, "NoSuchKey")
		case !ok:
			s.error(w, http.StatusForbidden, "AccessDenied")
		default:
			w.Header().Set("Content-Type", o.Header.Get("Content-Type"))
			w.Header().Set("Cache-Control", o.Header.Get("Cache-Control"))
			w.Header().Set("Content-Length", strconv.Itoa(len(o.Data)))
			if r.Method == http.MethodGet {
				w.Write(o.Data)
			}
		}
	default:
		s.error(w, http.StatusMethodNotAllowed, "MethodNotAllowed")
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (s *Server) error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>s3test</Message><RequestId>r1</RequestId></Error>`)
}
