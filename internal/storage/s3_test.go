package storage

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/testkit"
)

func TestParseURL(t *testing.T) {
	valid := []struct {
		name, raw string
		want      Location
	}{
		{"default", DefaultURL, Location{Dir: "./data/uploads"}},
		{"absolute directory", "file:///var/lib/catalogue/uploads", Location{Dir: "/var/lib/catalogue/uploads"}},
		{"directory with a question mark", "file:///tmp/a?b", Location{Dir: "/tmp/a?b"}},
		{"bucket only", "s3://catalogue-files", Location{Bucket: "catalogue-files"}},
		{"bucket, endpoint and region", "s3://files?endpoint=http://127.0.0.1:9000&region=eu-west-1",
			Location{Bucket: "files", Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1"}},
		{"prefix", "s3://files/prod/uploads/?region=eu-west-1",
			Location{Bucket: "files", Prefix: "prod/uploads", Region: "eu-west-1"}},
		{"escaped endpoint", "s3://files?endpoint=https%3A%2F%2Fs3.example.com",
			Location{Bucket: "files", Endpoint: "https://s3.example.com"}},
	}
	for _, tc := range valid {
		t.Run("valid/"+tc.name, func(t *testing.T) {
			got, err := ParseURL(tc.raw)
			if err != nil || got != tc.want {
				t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
			}
			// The logged form parses back to the same location.
			if again, err := ParseURL(got.String()); err != nil || again != got {
				t.Errorf("ParseURL(%q) = %+v, %v; want %+v", got.String(), again, err, got)
			}
		})
	}
	invalid := []struct {
		name, raw, msg string
	}{
		{"empty", "", "must start with file:// or s3://"},
		{"bare path", "./data/uploads", "must start with file:// or s3://"},
		{"other scheme", "gs://bucket", "must start with file:// or s3://"},
		{"empty directory", "file://", "needs a directory"},
		{"no bucket", "s3://?region=x", "not a valid S3 bucket name"},
		{"upper-case bucket", "s3://Files", "not a valid S3 bucket name"},
		{"short bucket", "s3://ab", "not a valid S3 bucket name"},
		{"bucket with two dots", "s3://a..b", "not a valid S3 bucket name"},
		{"credentials", "s3://key:secret@files", "must not hold credentials"},
		{"prefix with a parent", "s3://files/a/../b", "key prefix"},
		{"prefix with a space", "s3://files/a%20b", "key prefix"},
		{"unknown parameter", "s3://files?endpont=http://x", `unknown parameter "endpont"`},
		{"parameter twice", "s3://files?region=a&region=b", "region given 2 times"},
		{"relative endpoint", "s3://files?endpoint=127.0.0.1:9000", "must be an absolute http(s) URL"},
		{"endpoint of another scheme", "s3://files?endpoint=ftp://x", "must be an absolute http(s) URL"},
		{"empty region", "s3://files?region=", "region is empty"},
	}
	for _, tc := range invalid {
		t.Run("invalid/"+tc.name, func(t *testing.T) {
			got, err := ParseURL(tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("ParseURL(%q) = %+v, %v; want an error containing %q", tc.raw, got, err, tc.msg)
			}
		})
	}
}

func TestLocationOpen(t *testing.T) {
	ctx := context.Background()
	t.Run("file creates the directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "uploads")
		s, err := Location{Dir: dir}.Open(ctx, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(*Disk); !ok {
			t.Errorf("Open() = %T, want *Disk", s)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("directory %s: %v", dir, err)
		}
	})
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"s3 without credentials", nil},
		{"s3 without a secret", map[string]string{"AWS_ACCESS_KEY_ID": "key"}},
		{"s3 without a key id", map[string]string{"AWS_SECRET_ACCESS_KEY": "secret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Location{Bucket: "files", Endpoint: "http://127.0.0.1:1"}.Open(ctx, func(k string) string { return tc.env[k] })
			if err == nil || !strings.Contains(err.Error(), "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") {
				t.Errorf("Open() = %v; want an error naming the variables", err)
			}
		})
	}
}

// TestS3 checks what the contract tests cannot see: where the objects land
// in the bucket, and how a misconfigured or unreachable store is reported.
func TestS3(t *testing.T) {
	srv := testkit.StartS3(t)
	ctx := context.Background()
	env := srv.Env()
	getenv := func(k string) string { return env[k] }

	for _, tc := range []struct{ prefix, key string }{
		{"", ""},
		{"uploads", "uploads/"},
		{"prod/catalogue", "prod/catalogue/"},
	} {
		t.Run("keys under prefix "+tc.prefix, func(t *testing.T) {
			bucket := srv.Bucket(t)
			s := openS3(t, srv, bucket, tc.prefix)
			name := NewName(".png")
			if err := s.Put(ctx, name, []byte("image bytes")); err != nil {
				t.Fatal(err)
			}
			if got, want := srv.Keys(t, bucket), []string{tc.key + name}; !reflect.DeepEqual(got, want) {
				t.Fatalf("bucket holds %q, want %q", got, want)
			}
			if got := srv.Object(t, bucket, tc.key+name); string(got) != "image bytes" {
				t.Errorf("object holds %q", got)
			}
			if err := s.Delete(ctx, name); err != nil {
				t.Fatal(err)
			}
			if got := srv.Keys(t, bucket); len(got) != 0 {
				t.Errorf("bucket holds %q after Delete, want nothing", got)
			}
		})
	}

	t.Run("opened file seeks", func(t *testing.T) {
		s := openS3(t, srv, srv.Bucket(t), "")
		name := NewName(".png")
		if err := s.Put(ctx, name, []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
		rc, err := s.Open(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		rs, ok := rc.(interface {
			Seek(int64, int) (int64, error)
			Read([]byte) (int, error)
		})
		if !ok {
			t.Fatalf("Open() = %T, which does not seek", rc)
		}
		rs.Seek(6, 0)
		b := make([]byte, 4)
		if n, _ := rs.Read(b); string(b[:n]) != "6789" {
			t.Errorf("read %q after seeking to 6, want 6789", b[:n])
		}
	})

	t.Run("missing bucket stops the start", func(t *testing.T) {
		loc, _ := ParseURL(srv.URL("no-such-bucket", ""))
		_, err := loc.Open(ctx, getenv)
		if err == nil || !strings.Contains(err.Error(), "bucket no-such-bucket does not exist") {
			t.Errorf("Open() = %v; want the bucket named as missing", err)
		}
	})

	t.Run("wrong secret stops the start", func(t *testing.T) {
		loc, _ := ParseURL(srv.URL(srv.Bucket(t), ""))
		wrong := map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": "not-the-secret"}
		_, err := loc.Open(ctx, func(k string) string { return wrong[k] })
		if err == nil || !strings.Contains(err.Error(), "refused the credentials") {
			t.Errorf("Open() = %v; want the credentials named as refused", err)
		}
	})

	// Last: it stops the server.
	t.Run("stopped server is unavailable", func(t *testing.T) {
		bucket := srv.Bucket(t)
		s := openS3(t, srv, bucket, "")
		files := &Files{Store: s, BaseURL: testBase}
		saved, err := files.SaveImage(ctx, bytes.NewReader(testkit.PNG(16, 8, 7)))
		if err != nil {
			t.Fatal(err)
		}
		srv.Stop()
		if err := s.Put(ctx, NewName(".png"), []byte("x")); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Put() = %v, want ErrUnavailable", err)
		}
		if _, err := s.Open(ctx, saved.Name); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNotFound) {
			t.Errorf("Open() = %v, want ErrUnavailable", err)
		}
		if err := s.Delete(ctx, saved.Name); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Delete() = %v, want ErrUnavailable", err)
		}
		loc, _ := ParseURL(srv.URL(bucket, ""))
		if _, err := loc.Open(ctx, getenv); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Location.Open() = %v, want ErrUnavailable", err)
		}
	})
}

// TestS3Unreachable needs no server: nothing listens at the endpoint.
func TestS3Unreachable(t *testing.T) {
	endpoint := "http://" + testkit.FreeAddr(t)
	s, err := NewS3(S3Config{Location: Location{Bucket: "files", Endpoint: endpoint}, AccessKeyID: "k", SecretAccessKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Put(ctx, NewName(".png"), []byte("x")); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Put() = %v, want ErrUnavailable", err)
	}
	if err := s.Check(ctx); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Check() = %v, want ErrUnavailable", err)
	}
	// The caller's own cancellation is not an outage.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Open(cctx, NewName(".png")); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Errorf("Open(cancelled) = %v, want context.Canceled only", err)
	}
}
