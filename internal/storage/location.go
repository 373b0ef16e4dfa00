package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// DefaultURL is where files are kept when nothing is configured: a
// directory beside the default SQLite database, so a fresh checkout needs
// no set-up.
const DefaultURL = "file://./data/uploads"

// Location is a parsed storage URL (STORAGE_URL): a local directory
// (file://PATH) or an S3-compatible bucket (s3://BUCKET/PREFIX?endpoint=URL&region=REGION).
// It holds no secrets: S3 credentials come from the environment when the
// store is opened, so the URL can be logged as it is.
type Location struct {
	// Dir is the directory of a file:// location; empty for s3://.
	Dir string
	// Bucket is the bucket of an s3:// location (empty for file://). It must
	// exist; the service never creates it.
	Bucket string
	// Prefix, when set, is put before every key with a slash
	// (uploads/0123...png), so one bucket can hold several installations.
	Prefix string
	// Endpoint is the URL of a self-hosted store (MinIO, Ceph, versitygw,
	// ...), addressed path-style (ENDPOINT/BUCKET/KEY); empty means Amazon
	// S3 itself, addressed virtual-host style as AWS asks.
	Endpoint string
	// Region signs the requests; us-east-1 when empty.
	Region string
}

// bucketRE is S3's rule for bucket names (3 to 63 lower-case letters,
// digits, dots and hyphens, starting and ending with a letter or digit).
var bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// prefixRE admits key prefixes of plain path segments, so that a prefix can
// never make a key that a store or proxy would read differently.
var prefixRE = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)

// ParseURL parses a storage URL. file://PATH names a directory, relative
// (file://./data/uploads) or absolute (file:///var/lib/catalogue/uploads);
// everything after file:// is the path, as written. s3://BUCKET names a
// bucket, optionally with a key prefix (s3://BUCKET/uploads) and the query
// parameters endpoint (the absolute http(s) URL of a self-hosted,
// S3-compatible store; addressed path-style, since such stores rarely have
// a DNS name per bucket) and region. Any other parameter, and credentials
// in the URL, are refused: a typo must not silently fall back to a default,
// and secrets belong in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, not in a
// URL that is logged.
func ParseURL(raw string) (Location, error) {
	if dir, ok := strings.CutPrefix(raw, "file://"); ok {
		if dir == "" {
			return Location{}, errors.New("file:// needs a directory, e.g. file://./data/uploads")
		}
		return Location{Dir: dir}, nil
	}
	if !strings.HasPrefix(raw, "s3://") {
		return Location{}, fmt.Errorf("%q must start with file:// or s3://", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Location{}, fmt.Errorf("%q: %v", raw, err)
	}
	if u.User != nil {
		return Location{}, errors.New("s3:// URL must not hold credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	loc := Location{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	if !bucketRE.MatchString(loc.Bucket) || strings.Contains(loc.Bucket, "..") {
		return Location{}, fmt.Errorf("%q: bucket name %q is not a valid S3 bucket name", raw, loc.Bucket)
	}
	if loc.Prefix != "" && (!prefixRE.MatchString(loc.Prefix) || slices.ContainsFunc(strings.Split(loc.Prefix, "/"), isDots)) {
		return Location{}, fmt.Errorf("%q: key prefix %q may hold only letters, digits, '.', '_', '-' and '/' between segments, and no . or .. segment", raw, loc.Prefix)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Location{}, fmt.Errorf("%q: %v", raw, err)
	}
	for k, v := range q {
		if len(v) != 1 {
			return Location{}, fmt.Errorf("%q: parameter %s given %d times", raw, k, len(v))
		}
		switch k {
		case "endpoint":
			e, err := url.Parse(v[0])
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return Location{}, fmt.Errorf("%q: endpoint %q must be an absolute http(s) URL", raw, v[0])
			}
			loc.Endpoint = v[0]
		case "region":
			if v[0] == "" {
				return Location{}, fmt.Errorf("%q: region is empty", raw)
			}
			loc.Region = v[0]
		default:
			return Location{}, fmt.Errorf("%q: unknown parameter %q (want endpoint or region)", raw, k)
		}
	}
	return loc, nil
}

// isDots reports whether a path segment is "." or "..", which stores and
// proxies may resolve.
func isDots(seg string) bool { return seg == "." || seg == ".." }

// String returns the location as a URL, for logs.
func (l Location) String() string {
	if l.Bucket == "" {
		return "file://" + l.Dir
	}
	u := url.URL{Scheme: "s3", Host: l.Bucket}
	if l.Prefix != "" {
		u.Path = "/" + l.Prefix
	}
	q := url.Values{}
	if l.Endpoint != "" {
		q.Set("endpoint", l.Endpoint)
	}
	if l.Region != "" {
		q.Set("region", l.Region)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Open opens the store at the location: it creates a directory that does
// not exist yet, and checks that a bucket exists and that the credentials
// reach it, so a misconfigured replica stops at start rather than at its
// first upload. env looks up the AWS_* variables (os.Getenv in production):
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (both needed for s3://),
// AWS_SESSION_TOKEN (optional), and AWS_REGION or AWS_DEFAULT_REGION when
// the URL names no region (us-east-1 otherwise).
func (l Location) Open(ctx context.Context, env func(string) string) (Store, error) {
	if l.Bucket == "" {
		return NewDisk(l.Dir)
	}
	cfg := S3Config{
		Location:        l,
		AccessKeyID:     env("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: env("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    env("AWS_SESSION_TOKEN"),
	}
	cfg.Region = cmp.Or(l.Region, env("AWS_REGION"), env("AWS_DEFAULT_REGION"))
	if cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
		return nil, fmt.Errorf("%s: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", l)
	}
	s, err := NewS3(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Check(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", l, err)
	}
	return s, nil
}
