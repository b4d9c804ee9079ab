// Package s3images keeps generated pictures in the private images bucket (template.yaml's ImagesBucket)
// and hands out presigned GET URLs for them.
//
// A presigned URL lives at most as long as the credentials that signed it. SigV4 allows 7 days, which is
// what Put asks for, but a Lambda signs with its role's temporary credentials, which expire within hours:
// a URL kept in history stops working before the 7 days are up. So the key is what lasts: a reader that
// needs the picture later asks URL for a fresh one (or the bucket gets a CDN in front of it).
package s3images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/creatorstrategy/css/shared/ai"
	"github.com/creatorstrategy/css/shared/awsenv"
)

// URLLifetime is how long a presigned URL is valid: SigV4's longest (see the package comment for why it
// can be shorter in practice).
const URLLifetime = 7 * 24 * time.Hour

// Store is the S3 ImageStore.
type Store struct {
	client  *s3.Client
	presign *s3.PresignClient
	bucket  string
}

var _ ai.ImageStore = (*Store)(nil)

// NewClient returns an S3 client for region (the stack's, AWS_REGION), signing with the credentials in
// the environment (where Lambda puts the function role's) without the SDK's config loader; it makes no call
// until used.
func NewClient(region string) (*s3.Client, error) {
	if region == "" {
		return nil, errors.New("s3images: no region: set AWS_REGION")
	}
	return s3.New(s3.Options{Region: region, Credentials: aws.NewCredentialsCache(awsenv.Credentials{})}), nil
}

// New returns the store of bucket.
func New(client *s3.Client, bucket string) *Store {
	return &Store{client: client, presign: s3.NewPresignClient(client), bucket: bucket}
}

// Put uploads img under key, encrypted at rest (SSE-S3), and returns a presigned GET URL of it.
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
		// Keys are never reused (each picture has a new id), so a client may keep what it fetched.
		CacheControl: aws.String("private, max-age=31536000, immutable"),
	})
	if err != nil {
		return "", fail(key, fmt.Errorf("put: %w", err))
	}
	return s.URL(ctx, key)
}

// URL presigns a GET of key, valid for URLLifetime.
func (s *Store) URL(ctx context.Context, key string) (string, error) {
	if !ai.ValidImageKey(key) {
		return "", fail(key, errors.New("not an image key"))
	}
	req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)},
		s3.WithPresignExpires(URLLifetime))
	if err != nil {
		return "", fail(key, fmt.Errorf("presign: %w", err))
	}
	return req.URL, nil
}

func fail(key string, err error) error {
	return &ai.Error{Kind: ai.ErrFailed, Err: fmt.Errorf("image store: %s: %w", key, err)}
}
