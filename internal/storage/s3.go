package storage

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// DefaultS3Timeout bounds one call to the object store when S3Config.Timeout
// is zero: long enough for a large file over a slow link, short enough that
// a store that stopped answering fails the request instead of holding it.
const DefaultS3Timeout = 30 * time.Second

// S3Config describes a bucket of an S3-compatible object store.
type S3Config struct {
	// Location is the bucket, its key prefix, endpoint and region; its Dir
	// is unused.
	Location
	// AccessKeyID, SecretAccessKey and SessionToken (optional) are the
	// credentials, taken from the standard AWS_* variables.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Timeout bounds each call (DefaultS3Timeout when zero).
	Timeout time.Duration
}

// S3 is a Store in a bucket of an S3-compatible object store, so that
// several replicas share their files: what one stores, any other serves.
// Each file is one object whose key is its name (after the prefix). A PUT
// is atomic in S3, so a reader never sees a partial file.
type S3 struct {
	client  *s3.Client
	bucket  string
	prefix  string
	timeout time.Duration
}

var _ Store = (*S3)(nil)

// NewS3 returns a store over the bucket of cfg. It makes no request; Check
// does.
func NewS3(cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3 store: no bucket given")
	}
	cfg.Region = cmp.Or(cfg.Region, "us-east-1")
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultS3Timeout
	}
	creds := aws.Credentials{
		AccessKeyID:     cfg.AccessKeyID,
		SecretAccessKey: cfg.SecretAccessKey,
		SessionToken:    cfg.SessionToken,
		Source:          "environment",
	}
	opts := s3.Options{
		Region: cfg.Region,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return creds, nil
		}),
		// Checksums only where S3 requires them: the CRC trailers newer
		// SDKs send by default are not understood by every self-hosted
		// store, and TLS already protects the bytes in transit.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
		opts.UsePathStyle = true
	}
	prefix := ""
	if cfg.Prefix != "" {
		prefix = cfg.Prefix + "/"
	}
	return &S3{client: s3.New(opts), bucket: cfg.Bucket, prefix: prefix, timeout: cfg.Timeout}, nil
}

// Check asks the store whether the bucket exists and the credentials may
// use it, so that a misconfiguration shows at start. Its error names the
// cause: a missing bucket, refused credentials, or an unreachable store
// (wrapping ErrUnavailable).
func (s *S3) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.bucket)})
	switch status := statusOf(err); {
	case err == nil:
		return nil
	case status == http.StatusNotFound:
		return fmt.Errorf("bucket %s does not exist: create it first", s.bucket)
	case status == http.StatusForbidden || status == http.StatusUnauthorized || status == http.StatusBadRequest:
		return fmt.Errorf("bucket %s: the store refused the credentials of AWS_ACCESS_KEY_ID (HTTP %d)", s.bucket, status)
	}
	return s.fail(ctx, "check bucket", s.bucket, err)
}

// Put stores data as one object, with the content type of the name's
// extension so the bucket reads well in other tools.
func (s *S3) Put(ctx context.Context, name string, data []byte) error {
	return s.do(ctx, "store", name, func(ctx context.Context, key *string) error {
		_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
			Bucket:        aws.String(s.bucket),
			Key:           key,
			Body:          bytes.NewReader(data),
			ContentLength: aws.Int64(int64(len(data))),
			ContentType:   aws.String(contentType(name)),
		})
		return err
	})
}

// Open reads the whole object and returns it as a reader that also seeks,
// so the file handler answers range and conditional requests as it does
// for Disk. Files are images of at most MaxBytes, so holding one in memory
// costs little; reading it whole keeps the call under the timeout and
// frees the connection at once.
func (s *S3) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	var data []byte
	err := s.do(ctx, "open", name, func(ctx context.Context, key *string) error {
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: key})
		if err != nil {
			return err
		}
		defer out.Body.Close()
		data, err = io.ReadAll(out.Body)
		return err
	})
	if err != nil {
		return nil, err
	}
	return memoryFile{bytes.NewReader(data)}, nil
}

// Delete removes the object; S3 answers a missing key as a success, so a
// clean-up can be retried.
func (s *S3) Delete(ctx context.Context, name string) error {
	return s.do(ctx, "delete", name, func(ctx context.Context, key *string) error {
		_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: key})
		return err
	})
}

// do makes call, operation op on the object of name, with its key and
// under the timeout, and classifies its error (fail).
func (s *S3) do(ctx context.Context, op, name string, call func(context.Context, *string) error) error {
	if err := check(ctx, op, name); err != nil {
		return err
	}
	octx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := call(octx, aws.String(s.prefix+name)); err != nil {
		return s.fail(ctx, op, name, err)
	}
	return nil
}

// fail classifies an error of a call made under ctx (the caller's, before
// the timeout was added): a missing object is ErrNotFound; the caller's own
// cancellation stays what it is; a store that cannot be reached, timed
// out, or answered 5xx or 429 is ErrUnavailable (a retry may succeed);
// anything else (refused credentials, a bucket policy) is returned as it
// is, a fault of the deployment.
func (s *S3) fail(ctx context.Context, op, name string, err error) error {
	var api smithy.APIError
	switch status := statusOf(err); {
	case errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound"),
		status == http.StatusNotFound && op == "open":
		return fmt.Errorf("%s %s: %w", op, name, ErrNotFound)
	case ctx.Err() != nil:
		return fmt.Errorf("%s %s: %w", op, name, ctx.Err())
	case status == 0, status >= 500, status == http.StatusTooManyRequests:
		return fmt.Errorf("%s %s: %w: %w", op, name, ErrUnavailable, err)
	}
	return fmt.Errorf("%s %s: %w", op, name, err)
}

// statusOf returns the HTTP status of the store's answer behind err, or 0
// when there was none (the store was not reached).
func statusOf(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
