// Package s3test starts a real S3-compatible server for tests: versitygw
// serving a temporary directory on a free loopback port, so the S3 store is
// checked against the protocol as a server speaks it rather than against a
// mock. CI installs versitygw (.ci/run); elsewhere tests skip with a
// message when it is missing, and under CI=true they fail instead.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"go/build"
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

	"github.com/configurator/catalogue/internal/testkit"
)

// Install is the command that installs the server, as .ci/run runs it.
const Install = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// EnvBinary names a variable that may hold the path of versitygw; without
// it the binary is looked up in PATH, then in GOPATH/bin, where go install
// puts it.
const EnvBinary = "VERSITYGW"

// Region is the region the server and its clients sign with.
const Region = "us-east-1"

// Server is a running versitygw with one root account.
type Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:PORT.
	Endpoint string
	// AccessKey and SecretKey are the root account's credentials.
	AccessKey, SecretKey string

	client *s3.Client
	cmd    *exec.Cmd
	out    *testkit.SyncBuffer
	once   sync.Once
}

// Binary returns the path of versitygw, skipping the test when it is
// missing, or failing it under CI=true, where .ci/run must have installed
// it.
func Binary(t testing.TB) string {
	t.Helper()
	if p, ok := find(); ok {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("versitygw is not installed; CI must install it: %s", Install)
	}
	t.Skipf("versitygw is not installed, skipping the S3 tests: %s", Install)
	return ""
}

// Available reports whether versitygw is installed, for tests that start
// one server for many subtests and let only the S3 ones skip (through
// Binary) when it is not.
func Available() bool {
	_, ok := find()
	return ok
}

func find() (string, bool) {
	candidates := []string{os.Getenv(EnvBinary)}
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

// Start starts a server over a fresh temporary directory; it is stopped
// when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	addr := testkit.FreeAddr(t)
	s := &Server{
		Endpoint:  "http://" + addr,
		AccessKey: "test" + random(8),
		SecretKey: random(20),
		out:       &testkit.SyncBuffer{},
	}
	s.cmd = exec.Command(bin, "--port", addr, "--region", Region, "--quiet", "posix", t.TempDir())
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
		Region:       Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}, nil
		}),
	})
	return s
}

// Stop stops the server (as an outage would); it is safe to call twice.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
}

// Bucket creates an empty bucket with a fresh name and returns the name.
func (s *Server) Bucket(t testing.TB) string {
	t.Helper()
	name := "test-" + random(6)
	if _, err := s.client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s: %v\n%s", name, err, s.out.String())
	}
	return name
}

// URL returns the STORAGE_URL of bucket on this server, with prefix as its
// key prefix when not empty.
func (s *Server) URL(bucket, prefix string) string {
	u := "s3://" + bucket
	if prefix != "" {
		u += "/" + prefix
	}
	return u + "?endpoint=" + s.Endpoint + "&region=" + Region
}

// Env returns the variables a service needs to reach the server.
func (s *Server) Env() map[string]string {
	return map[string]string{"AWS_ACCESS_KEY_ID": s.AccessKey, "AWS_SECRET_ACCESS_KEY": s.SecretKey}
}

// Keys lists the keys of the objects in bucket, sorted, read through the
// S3 API (not the directory), so a test sees what any client sees.
func (s *Server) Keys(t testing.TB, bucket string) []string {
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
func (s *Server) Object(t testing.TB, bucket, key string) []byte {
	t.Helper()
	out, err := s.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(out.Body); err != nil {
		t.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return b.Bytes()
}

// Log returns what the server printed, for failure messages.
func (s *Server) Log() string { return strings.TrimSpace(s.out.String()) }

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}
