package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/imaging"
	"github.com/configurator/catalogue/internal/testkit"
)

const testBase = "http://files.test/files/"

// webp1x1 is a valid 1×1 lossless WebP; no WebP encoder exists to make one.
var webp1x1 = []byte{
	'R', 'I', 'F', 'F', 0x1a, 0x00, 0x00, 0x00, 'W', 'E', 'B', 'P',
	'V', 'P', '8', 'L', 0x0d, 0x00, 0x00, 0x00,
	0x2f, 0x00, 0x00, 0x00, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07, 0x00,
}

// countingReader is an endless reader that counts the bytes it hands out,
// to show SaveImage stops reading at its limit.
type countingReader struct{ n int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	r.n += int64(len(p))
	return len(p), nil
}

func newFiles() (*Files, *Memory) {
	m := NewMemory()
	return &Files{Store: m, BaseURL: testBase}, m
}

func TestSaveImageServedBack(t *testing.T) {
	tests := []struct {
		name        string
		data        []byte
		format      imaging.Format
		ext         string
		contentType string
	}{
		{"png", testkit.PNG(16, 8, 7), imaging.PNG, ".png", "image/png"},
		{"jpeg", testkit.JPEG(16, 8, 0), imaging.JPEG, ".jpg", "image/jpeg"},
		{"webp", webp1x1, imaging.WebP, ".webp", "image/webp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := &Files{Store: NewMemory()}
			mux := http.NewServeMux()
			mux.Handle("/files/", http.StripPrefix("/files/", files.Handler()))
			srv := httptest.NewServer(mux)
			defer srv.Close()
			files.BaseURL = srv.URL + "/files/"

			saved, err := files.SaveImage(context.Background(), bytes.NewReader(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if saved.Format != tc.format || saved.Size != int64(len(tc.data)) ||
				!ValidName(saved.Name) || !strings.HasSuffix(saved.Name, tc.ext) ||
				saved.URL != files.BaseURL+saved.Name {
				t.Fatalf("saved = %+v, want a %s of %d bytes named *%s under %s", saved, tc.format, len(tc.data), tc.ext, files.BaseURL)
			}

			res, err := http.Get(saved.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status = %d, want 200", res.StatusCode)
			}
			if !bytes.Equal(body, tc.data) {
				t.Errorf("served %d bytes that differ from the %d uploaded", len(body), len(tc.data))
			}
			for header, want := range map[string]string{
				"Content-Type":           tc.contentType,
				"X-Content-Type-Options": "nosniff",
				"Cache-Control":          "public, max-age=31536000, immutable",
				"Content-Length":         strconv.Itoa(len(tc.data)),
			} {
				if got := res.Header.Get(header); got != want {
					t.Errorf("%s = %q, want %q", header, got, want)
				}
			}
		})
	}
}

func TestSaveImageRefuses(t *testing.T) {
	pngData := testkit.PNG(16, 8, 7)
	tests := []struct {
		name     string
		maxBytes int64
		body     io.Reader
		wantErr  error
		wantMsg  string
	}{
		{"text", 0, strings.NewReader("just some text, not an image"), imaging.ErrUnsupported,
			"the file is not a PNG, JPEG or WebP image"},
		{"empty", 0, strings.NewReader(""), imaging.ErrUnsupported, ""},
		{"gif", 0, strings.NewReader("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), imaging.ErrUnsupported, ""},
		{"one byte over the limit", 100, bytes.NewReader(make([]byte, 101)), ErrTooLarge,
			"the file is too large: the limit is 100 bytes"},
		{"valid png one byte over the limit", int64(len(pngData)) - 1, bytes.NewReader(pngData), ErrTooLarge, ""},
		{"over the default limit", 0, io.LimitReader(&countingReader{}, DefaultMaxBytes+1), ErrTooLarge,
			"the file is too large: the limit is 10 MiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, store := newFiles()
			files.MaxBytes = tc.maxBytes
			saved, err := files.SaveImage(context.Background(), tc.body)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("SaveImage() = %+v, %v; want an error wrapping %v", saved, err, tc.wantErr)
			}
			if tc.wantMsg != "" && err.Error() != tc.wantMsg {
				t.Errorf("message = %q, want %q", err.Error(), tc.wantMsg)
			}
			if store.Len() != 0 {
				t.Errorf("%d files stored after a refusal, want 0", store.Len())
			}
		})
	}
}

func TestSaveImageReadsAtMostTheLimit(t *testing.T) {
	tests := []struct {
		name     string
		maxBytes int64
		want     int64
	}{
		{"small limit", 1000, 1001},
		{"default limit", 0, DefaultMaxBytes + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, _ := newFiles()
			files.MaxBytes = tc.maxBytes
			r := &countingReader{}
			if _, err := files.SaveImage(context.Background(), r); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("SaveImage() error = %v, want ErrTooLarge", err)
			}
			if r.n > tc.want {
				t.Errorf("read %d bytes, want at most %d", r.n, tc.want)
			}
		})
	}
}

func TestSaveImageAtTheLimit(t *testing.T) {
	data := testkit.PNG(16, 8, 7)
	files, _ := newFiles()
	files.MaxBytes = int64(len(data))
	if _, err := files.SaveImage(context.Background(), bytes.NewReader(data)); err != nil {
		t.Errorf("SaveImage of exactly MaxBytes = %v", err)
	}
}

func TestSaveBytes(t *testing.T) {
	tests := []struct {
		name    string
		format  imaging.Format
		ext     string
		wantErr error
	}{
		{"png", imaging.PNG, ".png", nil},
		{"jpeg", imaging.JPEG, ".jpg", nil},
		{"webp", imaging.WebP, ".webp", nil},
		{"unknown format", imaging.Format("gif"), "", imaging.ErrUnsupported},
		{"empty format", "", "", imaging.ErrUnsupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, store := newFiles()
			data := []byte("generated bytes")
			saved, err := files.SaveBytes(context.Background(), data, tc.format)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("SaveBytes() = %+v, %v; want an error wrapping %v", saved, err, tc.wantErr)
				}
				if store.Len() != 0 {
					t.Errorf("%d files stored after a refusal, want 0", store.Len())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(saved.Name, tc.ext) || saved.Format != tc.format || saved.Size != int64(len(data)) {
				t.Errorf("saved = %+v, want a %s named *%s", saved, tc.format, tc.ext)
			}
			if got := readAll(t, store, saved.Name); !bytes.Equal(got, data) {
				t.Errorf("stored %q, want %q", got, data)
			}
		})
	}
}

func TestURLAndNameOf(t *testing.T) {
	name := NewName(".png")
	bases := []struct{ name, base string }{
		{"with trailing slash", testBase},
		{"without trailing slash", strings.TrimSuffix(testBase, "/")},
	}
	for _, b := range bases {
		t.Run("round trip "+b.name, func(t *testing.T) {
			files := &Files{Store: NewMemory(), BaseURL: b.base}
			u := files.URL(name)
			if u != testBase+name {
				t.Errorf("URL() = %q, want %q", u, testBase+name)
			}
			if got, ok := files.NameOf(u); !ok || got != name {
				t.Errorf("NameOf(%q) = %q, %v; want %q, true", u, got, ok, name)
			}
		})
	}
	foreign := []struct{ name, url string }{
		{"empty", ""},
		{"other host", "http://elsewhere.test/files/" + name},
		{"other scheme", "https://files.test/files/" + name},
		{"other path", "http://files.test/static/" + name},
		{"base itself", testBase},
		{"base without slash", strings.TrimSuffix(testBase, "/")},
		{"sub-directory", testBase + "x/" + name},
		{"traversal", testBase + "../" + name},
		{"invalid name", testBase + "passwd"},
		{"query string", testBase + name + "?v=2"},
		{"relative", "/files/" + name},
		{"prefix of a longer base", "http://files.test/files2/" + name},
	}
	files, _ := newFiles()
	for _, tc := range foreign {
		t.Run("foreign "+tc.name, func(t *testing.T) {
			if got, ok := files.NameOf(tc.url); ok {
				t.Errorf("NameOf(%q) = %q, true; want false", tc.url, got)
			}
		})
	}
}

func TestFilesDelete(t *testing.T) {
	ctx := context.Background()
	files, store := newFiles()
	a, err := files.SaveBytes(ctx, []byte("a"), imaging.PNG)
	if err != nil {
		t.Fatal(err)
	}
	b, err := files.SaveBytes(ctx, []byte("b"), imaging.PNG)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := files.SaveBytes(ctx, []byte("kept"), imaging.PNG)
	if err != nil {
		t.Fatal(err)
	}
	foreign := "http://elsewhere.test/files/" + kept.Name
	if err := files.Delete(ctx, a.URL, "", foreign, b.URL, a.URL); err != nil {
		t.Fatalf("Delete() = %v", err)
	}
	tests := []struct {
		name    string
		file    string
		present bool
	}{
		{"first deleted", a.Name, false},
		{"second deleted", b.Name, false},
		{"file behind a foreign URL kept", kept.Name, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := store.Open(ctx, tc.file)
			if present := err == nil; present != tc.present {
				t.Errorf("present = %v (%v), want %v", present, err, tc.present)
			}
		})
	}
	t.Run("deleting again succeeds", func(t *testing.T) {
		if err := files.Delete(ctx, a.URL, b.URL); err != nil {
			t.Errorf("Delete() = %v", err)
		}
	})
}

// TestHandler serves files of every store, S3 included: what the handler
// answers must not depend on where the bytes are.
func TestHandler(t *testing.T) {
	for _, impl := range stores(t) {
		t.Run(impl.name, func(t *testing.T) {
			testHandler(t, &Files{Store: impl.new(t), BaseURL: testBase})
		})
	}
}

func testHandler(t *testing.T, files *Files) {
	data := testkit.PNG(16, 8, 7)
	saved, err := files.SaveImage(context.Background(), bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	h := files.Handler()
	missing := NewName(".png")
	tests := []struct {
		name        string
		method      string
		path        string
		header      map[string]string
		status      int
		contentType string
		body        []byte // checked when not nil
		problem     string // the detail of a problem body, when one is expected
	}{
		{name: "get", method: http.MethodGet, path: saved.Name,
			status: http.StatusOK, contentType: "image/png", body: data},
		{name: "get with leading slash", method: http.MethodGet, path: "/" + saved.Name,
			status: http.StatusOK, contentType: "image/png", body: data},
		{name: "head", method: http.MethodHead, path: saved.Name,
			status: http.StatusOK, contentType: "image/png", body: []byte{}},
		{name: "range", method: http.MethodGet, path: saved.Name, header: map[string]string{"Range": "bytes=0-7"},
			status: http.StatusPartialContent, contentType: "image/png", body: data[:8]},
		{name: "revalidation", method: http.MethodGet, path: saved.Name,
			header: map[string]string{"If-None-Match": `"` + saved.Name + `"`},
			status: http.StatusNotModified, body: []byte{}},
		{name: "unknown name", method: http.MethodGet, path: missing,
			status: http.StatusNotFound, contentType: "application/problem+json", problem: "no such file"},
		{name: "head of unknown name", method: http.MethodHead, path: missing,
			status: http.StatusNotFound, contentType: "application/problem+json"},
		{name: "traversal", method: http.MethodGet, path: "../../etc/passwd",
			status: http.StatusNotFound, contentType: "application/problem+json", problem: "no such file"},
		{name: "upper case", method: http.MethodGet, path: strings.ToUpper(saved.Name),
			status: http.StatusNotFound, contentType: "application/problem+json", problem: "no such file"},
		{name: "empty name", method: http.MethodGet, path: "",
			status: http.StatusNotFound, contentType: "application/problem+json", problem: "no such file"},
		{name: "post", method: http.MethodPost, path: saved.Name,
			status: http.StatusMethodNotAllowed, contentType: "application/problem+json", problem: "files are read with GET or HEAD"},
		{name: "put", method: http.MethodPut, path: saved.Name,
			status: http.StatusMethodNotAllowed, contentType: "application/problem+json"},
		{name: "delete", method: http.MethodDelete, path: saved.Name,
			status: http.StatusMethodNotAllowed, contentType: "application/problem+json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "/", nil)
			req.URL.Path = tc.path
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", res.StatusCode, tc.status)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
			if tc.contentType != "" {
				if got := res.Header.Get("Content-Type"); got != tc.contentType {
					t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
				}
			}
			if tc.status == http.StatusOK {
				if got, want := res.Header.Get("Content-Length"), strconv.Itoa(len(data)); got != want {
					t.Errorf("Content-Length = %q, want %q", got, want)
				}
			}
			if tc.status == http.StatusMethodNotAllowed {
				if got := res.Header.Get("Allow"); got != "GET, HEAD" {
					t.Errorf("Allow = %q, want %q", got, "GET, HEAD")
				}
			}
			body := rec.Body.Bytes()
			if tc.body != nil && !bytes.Equal(body, tc.body) {
				t.Errorf("body is %d bytes, want %d", len(body), len(tc.body))
			}
			if tc.problem != "" {
				var p map[string]any
				if err := json.Unmarshal(body, &p); err != nil {
					t.Fatalf("problem body %q: %v", body, err)
				}
				want := map[string]any{
					"type":   "about:blank",
					"title":  http.StatusText(tc.status),
					"status": float64(tc.status),
					"detail": tc.problem,
					"code":   codeOf[tc.status],
				}
				if len(p) != len(want) {
					t.Errorf("problem = %v, want %v", p, want)
				}
				for k, v := range want {
					if p[k] != v {
						t.Errorf("problem %s = %v, want %v", k, p[k], v)
					}
				}
			}
		})
	}
}

// streamStore is a Store whose files do not seek, as a bucket's would not.
type streamStore struct{ *Memory }

func (s streamStore) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	rc, err := s.Memory.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(rc), nil
}

// failingStore is a Store that cannot read, as with a broken disk.
type failingStore struct{ *Memory }

func (failingStore) Open(context.Context, string) (io.ReadCloser, error) {
	return nil, errors.New("disk on fire")
}

// unreachableStore is a Store whose server is down, as during an outage.
type unreachableStore struct{ *Memory }

func (unreachableStore) Open(_ context.Context, name string) (io.ReadCloser, error) {
	return nil, fmt.Errorf("open %s: %w: connection refused", name, ErrUnavailable)
}

func TestHandlerStores(t *testing.T) {
	data := testkit.PNG(16, 8, 7)
	tests := []struct {
		name   string
		store  func(*Memory) Store
		status int
	}{
		{"store that does not seek", func(m *Memory) Store { return streamStore{m} }, http.StatusOK},
		{"store that fails", func(m *Memory) Store { return failingStore{m} }, http.StatusInternalServerError},
		{"store that is unreachable", func(m *Memory) Store { return unreachableStore{m} }, http.StatusServiceUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := NewMemory()
			files := &Files{Store: tc.store(mem), BaseURL: testBase}
			saved, err := files.SaveImage(context.Background(), bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.URL.Path = saved.Name
			files.Handler().ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status = %d, want %d", rec.Code, tc.status)
			}
			if got := rec.Header().Get("Retry-After"); (got != "") != (tc.status == http.StatusServiceUnavailable) {
				t.Errorf("Retry-After = %q with status %d; want one with 503 only", got, tc.status)
			}
			if tc.status == http.StatusOK {
				if !bytes.Equal(rec.Body.Bytes(), data) {
					t.Error("served bytes differ from the upload")
				}
				if got, want := rec.Header().Get("Content-Length"), strconv.Itoa(len(data)); got != want {
					t.Errorf("Content-Length = %q, want %q", got, want)
				}
			}
		})
	}
}

// codeOf is the code of the problem answers the file handler gives, by
// status (internal/problem's kinds).
var codeOf = map[int]any{
	http.StatusNotFound:            "NOT_FOUND",
	http.StatusMethodNotAllowed:    "METHOD_NOT_ALLOWED",
	http.StatusServiceUnavailable:  "UNAVAILABLE",
	http.StatusInternalServerError: "INTERNAL",
}
