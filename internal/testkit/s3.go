package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"go/build"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Install is the command that installs the server, as .ci/run runs it.
const S3Install = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// S3EnvBinary names a variable that may hold the path of versitygw; without
// it the binary is looked up in PATH, then in GOPATH/bin, where go install
// puts it.
const S3EnvBinary = "VERSITYGW"

// S3Region is the region the server and its clients sign with.
const S3Region = "us-east-1"

// S3 is a running versitygw, an S3-compatible server, with one root
// account, serving a temporary directory on a free loopback port: the S3
// store is checked against the protocol as a server speaks it rather than
// against a mock.
type S3 struct {
	// Endpoint is the server's URL, http://127.0.0.1:PORT.
	Endpoint string
	// AccessKey and SecretKey are the root account's credentials.
	AccessKey, SecretKey string

	client *s3.Client
	cmd    *exec.Cmd
	out    *SyncBuffer
	once   sync.Once
}

// S3Binary returns the path of versitygw, skipping the test when it is
// missing, or failing it under CI=true, where .ci/run must have installed
// it.
func S3Binary(t testing.TB) string {
	t.Helper()
	if p, ok := findS3(); ok {
		return p
	}
	Missing(t, "versitygw", S3Install)
	return ""
}

// S3Available reports whether versitygw is installed, for tests that start
// one server for many subtests and let only the S3 ones skip (through
// Binary) when it is not.
func S3Available() bool {
	_, ok := findS3()
	return ok
}

func findS3() (string, bool) {
	candidates := []string{os.Getenv(S3EnvBinary)}
	if p, err := exec.LookPath("versitygw"); err == nil {
		candidates = append(candidates, p)
	}
	if gopath := filepath.SplitList(build.Default.GOPATH); len(gopath) > 0 {
		candidates = append(candidates, filepath.Join(gopath[0], "bin", "versitygw"))
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); p != "" && err == nil && !fi.IsDir() {
			return p, true
		}
	}
	return "", false
}

// StartS3 starts a server over a fresh temporary directory; it is stopped
// when the test ends.
func StartS3(t testing.TB) *S3 {
	t.Helper()
	bin := S3Binary(t)
	addr := FreeAddr(t)
	s := &S3{
		Endpoint:  "http://" + addr,
		AccessKey: "test" + randomKey(8),
		SecretKey: randomKey(20),
		out:       &SyncBuffer{},
	}
	s.cmd = exec.Command(bin, "--port", addr, "--region", S3Region, "--quiet", "posix", t.TempDir())
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw never listened on %s:\n%s", addr, s.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.client = s3.New(s3.Options{
		Region:       S3Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}, nil
		}),
	})
	return s
}

// Stop stops the server (as an outage would); it is safe to call twice.
func (s *S3) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
}

// Bucket creates an empty bucket with a fresh name and returns the name.
func (s *S3) Bucket(t testing.TB) string {
	t.Helper()
	name := "test-" + randomKey(6)
	if _, err := s.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s: %v\n%s", name, err, s.out.String())
	}
	return name
}

// URL returns the STORAGE_URL of bucket on this server, with prefix as its
// key prefix when not empty.
func (s *S3) URL(bucket, prefix string) string {
	u := "s3://" + bucket
	if prefix != "" {
		u += "/" + prefix
	}
	return u + "?endpoint=" + s.Endpoint + "&region=" + S3Region
}

// Env returns the variables a service needs to reach the server.
func (s *S3) Env() map[string]string {
	return map[string]string{"AWS_ACCESS_KEY_ID": s.AccessKey, "AWS_SECRET_ACCESS_KEY": s.SecretKey}
}

// Keys lists the keys of the objects in bucket, sorted, read through the
// S3 API (not the directory), so a test sees what any client sees.
func (s *S3) Keys(t testing.TB, bucket string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list bucket %s: %v", bucket, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	sort.Strings(keys)
	return keys
}

// Object returns the content of the object at key in bucket.
func (s *S3) Object(t testing.TB, bucket, key string) []byte {
	t.Helper()
	out, err := s.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return b
}

// Log returns what the server printed, for failure messages.
func (s *S3) Log() string { return strings.TrimSpace(s.out.String()) }

func randomKey(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}
