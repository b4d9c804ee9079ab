package s3images

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/ai/internal/fileroute"
	"github.com/creatorstrategy/css/shared/awsenv"
	"github.com/creatorstrategy/css/shared/config"
)

// Links are signed per window: every request for a picture within the same SignWindow gets the same
// presigned URL (so a browser's cache of the picture holds across them), valid LinkLifetime from the
// window's start, so at least LinkLifetime - SignWindow when handed out. The redirect itself may be cached
// for RedirectMaxAge, well within that.
const (
	SignWindow     = 5 * time.Minute
	LinkLifetime   = 20 * time.Minute
	RedirectMaxAge = 5 * time.Minute
)

// emptySHA256 is the SHA-256 of no bytes, the payload hash of a HEAD request.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Files serves GET and HEAD of /files/<key> from the bucket: a 302 to a short-lived presigned GET when the
// picture is there, 404 when it is not (or the key is not one ai.NewImageKey makes), 405 for other methods.
// It needs no credential from the client: the key is the capability.
//
// It speaks to S3 with the SDK's SigV4 signer and net/http rather than the S3 client: it makes one HEAD
// and presigns one GET, and the S3 client would add 4.6 MB to the function that links it (the utility
// function's bootstrap: 15.0 MB with this, 19.4 MB with the S3 client, against the API functions' 16 MB
// limit in `make build`).
type Files struct {
	objects *url.URL // the URL of the bucket's objects; a key's URL is objects + key
	region  string
	creds   aws.CredentialsProvider
	signer  *v4.Signer
	client  *http.Client
	now     func() time.Time
	log     *slog.Logger
}

// FilesConfig configures Files.
type FilesConfig struct {
	Bucket, Region string
	// Endpoint, when set, replaces S3's regional endpoint, addressed path-style (CSS_S3_ENDPOINT).
	Endpoint    string
	Credentials aws.CredentialsProvider // default: the environment's (where Lambda puts the role's)
	HTTPClient  *http.Client            // default: 10 s timeout, no redirects followed
	Now         func() time.Time        // default: time.Now
	Log         *slog.Logger
}

// NewFiles returns the handler's engine for c.Bucket. It makes no call.
func NewFiles(c FilesConfig) (*Files, error) {
	if c.Bucket == "" || c.Region == "" {
		return nil, errors.New("s3images: files need a bucket and a region")
	}
	objects, err := bucketURL(c.Bucket, c.Region, c.Endpoint)
	if err != nil {
		return nil, err
	}
	f := &Files{objects: objects, region: c.Region, creds: c.Credentials, client: c.HTTPClient, now: c.Now, log: cmp.Or(c.Log, slog.New(slog.DiscardHandler)),
		// S3 signs the path as sent, not escaped a second time (keys here need no escaping anyway).
		signer: v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })}
	if f.creds == nil {
		f.creds = aws.NewCredentialsCache(awsenv.Credentials{})
	}
	if f.client == nil {
		f.client = &http.Client{Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if f.now == nil {
		f.now = time.Now
	}
	return f, nil
}

// bucketURL is where the bucket's objects are: path-style under endpoint when one is given; else
// virtual-hosted (https://<bucket>.s3.<region>.amazonaws.com/), or path-style on the regional endpoint for a
// bucket name with dots, which S3's wildcard certificate does not cover.
func bucketURL(bucket, region, endpoint string) (*url.URL, error) {
	suffix := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	raw := "https://" + bucket + ".s3." + region + "." + suffix + "/"
	switch {
	case endpoint != "":
		raw = strings.TrimSuffix(endpoint, "/") + "/" + bucket + "/"
	case strings.Contains(bucket, "."):
		raw = "https://s3." + region + "." + suffix + "/" + bucket + "/"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("s3images: bucket URL %q: not an http(s) URL", raw)
	}
	return u, nil
}

// FilesHandler is the /files/ handler of the configuration (the utility function's): Files over
// CSS_IMAGES_BUCKET, or, without a bucket, a handler that finds nothing.
func FilesHandler(cfg config.Config, log *slog.Logger) (http.Handler, error) {
	if cfg.ImagesBucket == "" {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, ok := fileroute.Key(w, r); ok {
				fileroute.NotFound(w)
			}
		}), nil
	}
	f, err := NewFiles(FilesConfig{Bucket: cfg.ImagesBucket, Region: cfg.Region, Endpoint: cfg.S3Endpoint, Log: log})
	if err != nil {
		return nil, err
	}
	return f.Handler(), nil
}

// Handler serves ai.FilesPath + key.
func (f *Files) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := fileroute.Key(w, r)
		if !ok {
			return
		}
		ctx := r.Context()
		found, err := f.exists(ctx, key)
		if err != nil {
			// The key is never logged: it is what lets anyone fetch the picture.
			f.log.ErrorContext(ctx, "images: the bucket did not answer", "folder", folder(key), "error", err.Error())
			fileroute.Error(w, http.StatusInternalServerError, "INTERNAL", "the image store did not answer")
			return
		}
		if !found {
			fileroute.NotFound(w)
			return
		}
		link, err := f.Presign(ctx, key)
		if err != nil {
			f.log.ErrorContext(ctx, "images: presign", "folder", folder(key), "error", err.Error())
			fileroute.Error(w, http.StatusInternalServerError, "INTERNAL", "the image store did not answer")
			return
		}
		h := w.Header()
		h.Set("Location", link)
		h.Set("Cache-Control", "private, max-age="+strconv.Itoa(int(RedirectMaxAge.Seconds())))
		h.Set("Referrer-Policy", "no-referrer")
		w.WriteHeader(http.StatusFound)
	})
}

// exists asks S3 for the object's head. Without s3:ListBucket (the function is granted s3:GetObject on
// images/* only) S3 answers a missing object 403, not 404: both mean "not here" to a client.
func (f *Files) exists(ctx context.Context, key string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, f.objects.String()+key, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	creds, err := f.creds.Retrieve(ctx)
	if err != nil {
		return false, fmt.Errorf("credentials: %w", err)
	}
	if err := f.signer.SignHTTP(ctx, creds, req, emptySHA256, "s3", f.region, f.now().UTC()); err != nil {
		return false, fmt.Errorf("sign: %w", err)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return false, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusNotFound, http.StatusForbidden:
		return false, nil
	}
	return false, fmt.Errorf("HEAD answered %d", resp.StatusCode)
}

// Presign returns a presigned GET of key, signed at the start of the current SignWindow and valid
// LinkLifetime from then.
func (f *Files) Presign(ctx context.Context, key string) (string, error) {
	if !ai.ValidImageKey(key) {
		return "", fail(key, errors.New("not an image key"))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.objects.String()+key+
		"?X-Amz-Expires="+strconv.Itoa(int(LinkLifetime.Seconds())), nil)
	if err != nil {
		return "", err
	}
	creds, err := f.creds.Retrieve(ctx)
	if err != nil {
		return "", fmt.Errorf("credentials: %w", err)
	}
	signed, _, err := f.signer.PresignHTTP(ctx, creds, req, "UNSIGNED-PAYLOAD", "s3", f.region, f.now().UTC().Truncate(SignWindow))
	if err != nil {
		return "", fmt.Errorf("presign: %w", err)
	}
	return signed, nil
}
