// Package sigv4test checks AWS Signature Version 4 on requests that loopback servers in tests receive from
// the real SDK (or from code signing with its signer): it signs the request again with the expected
// credentials, at the request's own date, over the headers it says it signed, and compares. Test support:
// only tests and the loopback servers of other test-support packages import it.
package sigv4test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Scope is what a signature was made for.
type Scope struct {
	Service, Region string
	Date            time.Time
}

// scope reads <access key>/<yyyymmdd>/<region>/<service>/aws4_request.
func scope(credential, accessKey string) (Scope, error) {
	parts := strings.Split(credential, "/")
	if len(parts) != 5 || parts[0] != accessKey || parts[4] != "aws4_request" {
		return Scope{}, fmt.Errorf("credential %q: want %s/<date>/<region>/<service>/aws4_request", credential, accessKey)
	}
	return Scope{Region: parts[2], Service: parts[3]}, nil
}

// signer signs as the SDK does for service: S3 signs the path as sent, the others escape it again.
func signer(service string) *v4.Signer {
	return v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = service == "s3" })
}

// Verify checks the Authorization header of r, whose body was body, against creds, and returns what the
// signature was made for. The payload hash is X-Amz-Content-Sha256 when the request sends one (S3), else
// the body's SHA-256.
func Verify(r *http.Request, body []byte, creds aws.Credentials) (Scope, error) {
	authz := r.Header.Get("Authorization")
	cred, ok := strings.CutPrefix(authz, "AWS4-HMAC-SHA256 Credential=")
	if !ok {
		return Scope{}, fmt.Errorf("Authorization %q: not SigV4", authz)
	}
	cred, _, _ = strings.Cut(cred, ",")
	sc, err := scope(cred, creds.AccessKeyID)
	if err != nil {
		return Scope{}, err
	}
	var signed []string
	for _, part := range strings.Split(authz, ", ") {
		if v, ok := strings.CutPrefix(part, "SignedHeaders="); ok {
			signed = strings.Split(v, ";")
		}
	}
	if sc.Date, err = time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date")); err != nil {
		return Scope{}, fmt.Errorf("X-Amz-Date: %w", err)
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.RequestURI, nil)
	if err != nil {
		return Scope{}, err
	}
	again.ContentLength = r.ContentLength
	for _, h := range signed {
		if h != "host" && h != "content-length" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	hash := r.Header.Get("X-Amz-Content-Sha256")
	if hash == "" {
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:])
	}
	if err := signer(sc.Service).SignHTTP(context.Background(), creds, again, hash, sc.Service, sc.Region, sc.Date); err != nil {
		return Scope{}, err
	}
	if got := again.Header.Get("Authorization"); got != authz {
		return Scope{}, fmt.Errorf("signature does not verify:\n got  %s\n want %s", authz, got)
	}
	return sc, nil
}

// ErrExpired is VerifyPresigned's answer for a URL used outside its lifetime.
var ErrExpired = errors.New("presigned URL expired or not yet valid")

// VerifyPresigned checks a request made with a presigned URL (the signature in the query) against creds
// at time now, and returns what it was signed for.
func VerifyPresigned(r *http.Request, creds aws.Credentials, now time.Time) (Scope, error) {
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" || q.Get("X-Amz-SignedHeaders") != "host" {
		return Scope{}, fmt.Errorf("query %v: not a SigV4 presigned URL signing the host only", q)
	}
	sc, err := scope(q.Get("X-Amz-Credential"), creds.AccessKeyID)
	if err != nil {
		return Scope{}, err
	}
	if sc.Date, err = time.Parse("20060102T150405Z", q.Get("X-Amz-Date")); err != nil {
		return Scope{}, fmt.Errorf("X-Amz-Date: %w", err)
	}
	secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || secs < 1 || secs > 7*24*3600 {
		return Scope{}, fmt.Errorf("X-Amz-Expires %q", q.Get("X-Amz-Expires"))
	}
	if now.Before(sc.Date.Add(-5*time.Minute)) || now.After(sc.Date.Add(time.Duration(secs)*time.Second)) {
		return Scope{}, ErrExpired
	}
	sig := q.Get("X-Amz-Signature")
	for _, k := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Security-Token", "X-Amz-Signature"} {
		q.Del(k)
	}
	unsigned := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: q.Encode()}
	again, err := http.NewRequest(r.Method, unsigned.String(), nil)
	if err != nil {
		return Scope{}, err
	}
	u, _, err := signer(sc.Service).PresignHTTP(context.Background(), creds, again, "UNSIGNED-PAYLOAD", sc.Service, sc.Region, sc.Date)
	if err != nil {
		return Scope{}, err
	}
	pu, err := url.Parse(u)
	if err != nil {
		return Scope{}, err
	}
	if pu.Query().Get("X-Amz-Signature") != sig {
		return Scope{}, errors.New("presigned signature does not verify")
	}
	return sc, nil
}
