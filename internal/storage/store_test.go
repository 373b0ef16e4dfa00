package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/configurator/catalogue/internal/testkit"
)

// storeImpl is one Store implementation under test.
type storeImpl struct {
	name string
	new  func(t *testing.T) Store
}

// stores lists every Store implementation, so each behaviour below is
// checked against all of them: S3 against a real versitygw that t starts
// (one server, a fresh bucket per subtest, keys under a prefix). Without
// versitygw the S3 subtests skip, or fail under CI=true.
func stores(t *testing.T) []storeImpl {
	var srv *testkit.S3
	if testkit.S3Available() {
		srv = testkit.StartS3(t)
	}
	return []storeImpl{
		{"disk", func(t *testing.T) Store {
			d, err := NewDisk(filepath.Join(t.TempDir(), "uploads"))
			if err != nil {
				t.Fatal(err)
			}
			return d
		}},
		{"memory", func(*testing.T) Store { return NewMemory() }},
		{"s3", func(t *testing.T) Store {
			if srv == nil {
				testkit.S3Binary(t) // skips, or fails under CI=true
			}
			return openS3(t, srv, srv.Bucket(t), "uploads")
		}},
	}
}

// openS3 opens the store of a bucket on srv through its STORAGE_URL, as
// serve does.
func openS3(t *testing.T, srv *testkit.S3, bucket, prefix string) Store {
	t.Helper()
	loc, err := ParseURL(srv.URL(bucket, prefix))
	if err != nil {
		t.Fatal(err)
	}
	env := srv.Env()
	s, err := loc.Open(context.Background(), func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("open %s: %v\n%s", loc, err, srv.Log())
	}
	return s
}

const hexName = "0123456789abcdef0123456789abcdef"

func readAll(t *testing.T, s Store, name string) []byte {
	t.Helper()
	rc, err := s.Open(context.Background(), name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", name, err)
	}
	return b
}

func TestStore(t *testing.T) {
	allBytes := make([]byte, 256*4)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	ctx := context.Background()
	behaviours := []struct {
		name string
		run  func(t *testing.T, s Store)
	}{
		{"put then open round-trips byte for byte", func(t *testing.T, s Store) {
			name := NewName(".png")
			if err := s.Put(ctx, name, allBytes); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, s, name); !bytes.Equal(got, allBytes) {
				t.Errorf("read %d bytes, want the %d put", len(got), len(allBytes))
			}
		}},
		{"empty file round-trips", func(t *testing.T, s Store) {
			name := NewName("")
			if err := s.Put(ctx, name, nil); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, s, name); len(got) != 0 {
				t.Errorf("read %d bytes, want 0", len(got))
			}
		}},
		{"put replaces", func(t *testing.T, s Store) {
			name := NewName(".jpg")
			for _, data := range []string{"first version", "second"} {
				if err := s.Put(ctx, name, []byte(data)); err != nil {
					t.Fatal(err)
				}
			}
			if got := readAll(t, s, name); string(got) != "second" {
				t.Errorf("read %q, want %q", got, "second")
			}
		}},
		{"changing the caller's slice after put changes nothing", func(t *testing.T, s Store) {
			name := NewName(".png")
			data := []byte("original")
			if err := s.Put(ctx, name, data); err != nil {
				t.Fatal(err)
			}
			copy(data, "XXXXXXXX")
			if got := readAll(t, s, name); string(got) != "original" {
				t.Errorf("read %q, want %q", got, "original")
			}
		}},
		{"open missing is ErrNotFound", func(t *testing.T, s Store) {
			rc, err := s.Open(ctx, NewName(".png"))
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("Open() = %v, %v; want ErrNotFound", rc, err)
			}
		}},
		{"delete is idempotent", func(t *testing.T, s Store) {
			name := NewName(".webp")
			if err := s.Put(ctx, name, []byte("x")); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				if err := s.Delete(ctx, name); err != nil {
					t.Fatalf("Delete #%d: %v", i+1, err)
				}
			}
			if _, err := s.Open(ctx, name); !errors.Is(err, ErrNotFound) {
				t.Errorf("Open after Delete = %v, want ErrNotFound", err)
			}
		}},
		{"delete of a name never stored succeeds", func(t *testing.T, s Store) {
			if err := s.Delete(ctx, NewName(".png")); err != nil {
				t.Errorf("Delete() = %v", err)
			}
		}},
		{"cancelled context is refused", func(t *testing.T, s Store) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			name := NewName(".png")
			if err := s.Put(cctx, name, []byte("x")); !errors.Is(err, context.Canceled) {
				t.Errorf("Put() = %v, want context.Canceled", err)
			}
			if _, err := s.Open(cctx, name); !errors.Is(err, context.Canceled) {
				t.Errorf("Open() = %v, want context.Canceled", err)
			}
			if err := s.Delete(cctx, name); !errors.Is(err, context.Canceled) {
				t.Errorf("Delete() = %v, want context.Canceled", err)
			}
		}},
		{"concurrent use", func(t *testing.T, s Store) {
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for i := range 16 {
				wg.Go(func() {
					name := NewName(".png")
					want := fmt.Appendf(nil, "file %d", i)
					if err := s.Put(ctx, name, want); err != nil {
						errs <- err
						return
					}
					rc, err := s.Open(ctx, name)
					if err != nil {
						errs <- err
						return
					}
					got, err := io.ReadAll(rc)
					rc.Close()
					if err != nil || !bytes.Equal(got, want) {
						errs <- fmt.Errorf("read %q, %v; want %q", got, err, want)
						return
					}
					errs <- s.Delete(ctx, name)
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
		}},
	}
	for _, impl := range stores(t) {
		for _, b := range behaviours {
			t.Run(impl.name+"/"+b.name, func(t *testing.T) {
				b.run(t, impl.new(t))
			})
		}
	}
}

var invalidNames = []struct {
	name, value string
}{
	{"parent directory", "../x"},
	{"parent then valid name", "../" + hexName + ".png"},
	{"slash", "a/b.png"},
	{"valid name under a directory", "sub/" + hexName + ".png"},
	{"absolute path", "/etc/passwd"},
	{"empty", ""},
	{"dot", "."},
	{"dot dot", ".."},
	{"upper-case hex", strings.ToUpper(hexName) + ".png"},
	{"upper-case extension", hexName + ".PNG"},
	{"too short", hexName[:31] + ".png"},
	{"too long", hexName + "0.png"},
	{"not hex", "0123456789abcdef0123456789abcdeg.png"},
	{"extension too long", hexName + ".pngpng"},
	{"empty extension", hexName + "."},
	{"two extensions", hexName + ".tar.gz"},
	{"double dot", hexName + "..png"},
	{"trailing newline", hexName + ".png\n"},
	{"trailing slash", hexName + "/"},
	{"backslash", hexName + "\\x"},
	{"nul byte", hexName + ".png\x00"},
	{"hidden temporary file", ".upload-123"},
}

func TestStoreRefusesInvalidNames(t *testing.T) {
	ctx := context.Background()
	for _, impl := range stores(t) {
		for _, tc := range invalidNames {
			t.Run(impl.name+"/"+tc.name, func(t *testing.T) {
				s := impl.new(t)
				if err := s.Put(ctx, tc.value, []byte("x")); !errors.Is(err, ErrInvalidName) {
					t.Errorf("Put(%q) = %v, want ErrInvalidName", tc.value, err)
				}
				if _, err := s.Open(ctx, tc.value); !errors.Is(err, ErrInvalidName) {
					t.Errorf("Open(%q) = %v, want ErrInvalidName", tc.value, err)
				}
				if err := s.Delete(ctx, tc.value); !errors.Is(err, ErrInvalidName) {
					t.Errorf("Delete(%q) = %v, want ErrInvalidName", tc.value, err)
				}
			})
		}
	}
}

func TestValidName(t *testing.T) {
	valid := []struct{ name, value string }{
		{"no extension", hexName},
		{"png", hexName + ".png"},
		{"jpg", hexName + ".jpg"},
		{"webp", hexName + ".webp"},
		{"five characters", hexName + ".abc12"},
		{"one character", hexName + ".x"},
	}
	for _, tc := range valid {
		t.Run("valid/"+tc.name, func(t *testing.T) {
			if !ValidName(tc.value) {
				t.Errorf("ValidName(%q) = false, want true", tc.value)
			}
		})
	}
	for _, tc := range invalidNames {
		t.Run("invalid/"+tc.name, func(t *testing.T) {
			if ValidName(tc.value) {
				t.Errorf("ValidName(%q) = true, want false", tc.value)
			}
		})
	}
}

func TestNewName(t *testing.T) {
	tests := []struct {
		name, ext string
	}{
		{"png", ".png"},
		{"jpg", ".jpg"},
		{"webp", ".webp"},
		{"none", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := NewName(tc.ext), NewName(tc.ext)
			for _, n := range []string{a, b} {
				if !ValidName(n) || len(n) != 32+len(tc.ext) || !strings.HasSuffix(n, tc.ext) {
					t.Errorf("NewName(%q) = %q, want 32 hex digits then %q", tc.ext, n, tc.ext)
				}
			}
			if a == b {
				t.Errorf("two calls both returned %q", a)
			}
		})
	}
}

func TestNewDisk(t *testing.T) {
	t.Run("creates nested directory 0o750", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data", "uploads")
		if _, err := NewDisk(dir); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		// The umask may remove bits from 0o750 but never adds any.
		if perm := fi.Mode().Perm(); !fi.IsDir() || perm&^0o750 != 0 || perm&0o700 != 0o700 {
			t.Errorf("mode = %v, want a directory of 0o750 or less for the group", fi.Mode())
		}
	})
	t.Run("existing directory is used", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := NewDisk(dir); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("empty path is refused", func(t *testing.T) {
		if _, err := NewDisk(""); err == nil {
			t.Error("NewDisk(\"\") succeeded")
		}
	})
	t.Run("path through a file is refused", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := NewDisk(filepath.Join(file, "uploads")); err == nil {
			t.Error("NewDisk under a regular file succeeded")
		}
	})
}

func TestDiskFiles(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "uploads")
	d, err := NewDisk(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := NewName(".png")
	if err := d.Put(ctx, name, []byte("content")); err != nil {
		t.Fatal(err)
	}
	_ = d.Put(ctx, "../escaped", []byte("x"))

	t.Run("file mode is 0o640", func(t *testing.T) {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != 0o640 {
			t.Errorf("mode = %v, want -rw-r-----", fi.Mode())
		}
	})
	t.Run("no temporary file is left", func(t *testing.T) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != name {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("directory holds %q, want only %q", names, name)
		}
	})
	t.Run("nothing is written outside the directory", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join(parent, "escaped")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stat of the escaped file = %v, want not exist", err)
		}
	})
}
