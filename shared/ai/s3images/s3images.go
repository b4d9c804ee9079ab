// Package s3images keeps generated pictures in the private images bucket (template.yaml's ImagesBucket)
// and serves them at lasting URLs.
//
// A picture's URL is <public URL>/files/<key>, as the local stack's is (ai/localimages): the generation
// worker stores it in the run (history, GET /generations/{id}, MCP, webhook payloads), so it must outlive
// any credentials. A presigned S3 URL cannot: it dies with the session of the role that signed it (hours in
// a Lambda). So Store.Put (the worker, PutObject only) returns the lasting URL, and Files (the utility
// function, GetObject only) answers GET /files/<key> with a redirect to a presigned GET of a few minutes,
// signed when asked.
package s3images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/awsenv"
)

// Store is the S3 ImageStore.
type Store struct {
	client    *s3.Client
	bucket    string
	publicURL string
}

var _ ai.ImageStore = (*Store)(nil)

// NewClient returns an S3 client for region (the stack's, AWS_REGION), signing with the credentials in
// the environment (where Lambda puts the function role's) without the SDK's config loader; it makes no call
// until used. endpoint, when set, replaces S3's (CSS_S3_ENDPOINT: a loopback S3 in tests), addressed
// path-style.
func NewClient(region, endpoint string) (*s3.Client, error) {
	if region == "" {
		return nil, errors.New("s3images: no region: set AWS_REGION")
	}
	client, err := awsenv.HTTPClient()
	if err != nil {
		return nil, fmt.Errorf("s3images: %w", err)
	}
	return s3.New(s3.Options{Region: region, Credentials: aws.NewCredentialsCache(awsenv.Credentials{}), HTTPClient: client}, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint, o.UsePathStyle = aws.String(endpoint), true
		}
	}), nil
}

// New returns the store of bucket, whose pictures clients fetch at publicURL + /files/<key> (the API's
// origin, CSS_PUBLIC_URL).
func New(client *s3.Client, bucket, publicURL string) (*Store, error) {
	if publicURL == "" {
		return nil, errors.New("s3images: no public URL for the pictures: set CSS_PUBLIC_URL")
	}
	return &Store{client: client, bucket: bucket, publicURL: publicURL}, nil
}

// Put uploads img under key, encrypted at rest (SSE-S3), and returns its lasting URL.
func (s *Store) Put(ctx context.Context, key string, img ai.Image) (string, error) {
	if err := ai.CheckPut(key, img); err != nil {
		return "", fail(key, err)
	}
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:               aws.String(s.bucket),
		Key:                  aws.String(key),
		Body:                 bytes.NewReader(img.Data),
		ContentLength:        aws.Int64(int64(len(img.Data))),
		ContentType:          aws.String(img.ContentType),
		ServerSideEncryption: types.ServerSideEncryptionAes256,
		// Keys are never reused (each picture has a new name), so a client may keep what it fetched.
		CacheControl: aws.String("private, max-age=31536000, immutable"),
	})
	if err != nil {
		return "", fail(key, fmt.Errorf("put: %w", err))
	}
	return ai.ImageURL(s.publicURL, key), nil
}

// fail wraps err as a failed model call. It names the key's channel folder, never the key: the key is
// the capability to fetch the picture, and errors end up in logs.
func fail(key string, err error) error {
	return &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("image store: %s: %w", folder(key), err)}
}

// folder is the part of a key that may be logged: images/<channel>/.
func folder(key string) string { return key[:strings.LastIndexByte(key, '/')+1] }
