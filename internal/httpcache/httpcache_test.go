package httpcache

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
)

func TestNoneMatch(t *testing.T) {
	const tag = `"0123456789abcdef"`
	for _, tc := range []struct {
		name   string
		values []string
		want   bool
	}{
		{"absent", nil, false},
		{"empty", []string{""}, false},
		{"same", []string{tag}, true},
		{"other", []string{`"fedcba9876543210"`}, false},
		{"weak form of the same", []string{`W/` + tag}, true},
		{"star", []string{"*"}, true},
		{"star with spaces", []string{" * "}, true},
		{"in a list", []string{`"a", ` + tag + `, "b"`}, true},
		{"list without it", []string{`"a", W/"b"`}, false},
		{"in a second field line", []string{`"a"`, tag}, true},
		{"empty list elements", []string{` , ,` + tag + `,`}, true},
		{"tag holding a comma", []string{`"x,y", ` + tag}, true},
		{"unquoted", []string{`0123456789abcdef`}, false},
		{"unterminated", []string{`"0123456789abcdef`}, false},
		{"prefix only", []string{`"0123456789abcde"`}, false},
		{"malformed before it", []string{`abc, ` + tag}, false},
		{"junk after a tag", []string{`"a"x, ` + tag}, false},
		{"lower-case weak prefix", []string{`w/` + tag}, false},
		{"control character", []string{"\"01\x01\", " + tag}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NoneMatch(tc.values, tag); got != tc.want {
				t.Errorf("NoneMatch(%q, %s) = %v; want %v", tc.values, tag, got, tc.want)
			}
		})
	}
}

func TestETag(t *testing.T) {
	body := []byte(`[{"id":1}]` + "\n")
	h := http.Header{"Content-Type": {"application/json"}, "X-Total-Count": {"30"}}
	tag := ETag(h, body)
	if !regexp.MustCompile(`^"[0-9a-f]{16}"$`).MatchString(tag) {
		t.Fatalf("ETag = %s; want 16 hex digits, quoted", tag)
	}
	if again := ETag(h.Clone(), append([]byte(nil), body...)); again != tag {
		t.Errorf("ETag of the same answer = %s, then %s; want the same", tag, again)
	}
	for name, change := range map[string]func(http.Header, []byte) (http.Header, []byte){
		"another body":  func(h http.Header, b []byte) (http.Header, []byte) { return h, []byte(`[{"id":2}]` + "\n") },
		"another total": func(h http.Header, b []byte) (http.Header, []byte) { h.Set("X-Total-Count", "31"); return h, b },
		"a Link": func(h http.Header, b []byte) (http.Header, []byte) {
			h.Set("Link", `<http://x/?page=2>; rel="next"`)
			return h, b
		},
		"another media": func(h http.Header, b []byte) (http.Header, []byte) {
			h.Set("Content-Type", "application/graphql-response+json")
			return h, b
		},
		"no total header": func(h http.Header, b []byte) (http.Header, []byte) { h.Del("X-Total-Count"); return h, b },
	} {
		h2, b2 := change(h.Clone(), body)
		if got := ETag(h2, b2); got == tag {
			t.Errorf("%s: ETag = %s, the same as before", name, got)
		}
	}
	// Headers that describe the exchange, not the representation, leave
	// the tag alone.
	h2 := h.Clone()
	h2.Set("X-Request-Id", "abc")
	h2.Set("RateLimit-Remaining", "5")
	if got := ETag(h2, body); got != tag {
		t.Errorf("ETag with a request id = %s; want %s", got, tag)
	}
}

func TestWrite(t *testing.T) {
	body := []byte(`{"id":1}` + "\n")
	serve := func(method string, inm ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "/materials/1", nil)
		for _, v := range inm {
			r.Header.Add("If-None-Match", v)
		}
		w := httptest.NewRecorder()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Link", `<http://x/?page=2>; rel="next"`)
		w.Header().Set("X-Request-Id", "req-1")
		Write(w, r, body)
		return w
	}
	first := serve(http.MethodGet)
	tag := first.Header().Get("ETag")
	if first.Code != http.StatusOK || first.Body.String() != string(body) {
		t.Fatalf("GET = %d %q; want 200 %q", first.Code, first.Body, body)
	}
	want := map[string]string{
		"ETag": tag, "Cache-Control": "private, no-cache", "Vary": "Authorization",
		"Content-Type": "application/json", "Content-Length": "9", "X-Request-Id": "req-1",
	}
	for k, v := range want {
		if got := first.Header().Get(k); got != v || v == "" {
			t.Errorf("GET: %s = %q; want %q", k, got, v)
		}
	}

	for name, inm := range map[string][]string{"the tag": {tag}, "star": {"*"}, "weak, in a list": {`"x", W/` + tag}} {
		w := serve(http.MethodGet, inm...)
		if w.Code != http.StatusNotModified || w.Body.Len() != 0 {
			t.Errorf("If-None-Match %s: %d with %d bytes; want 304 with none", name, w.Code, w.Body.Len())
		}
		for _, k := range []string{"ETag", "Cache-Control", "Vary", "X-Request-Id"} {
			if got := w.Header().Get(k); got != first.Header().Get(k) {
				t.Errorf("If-None-Match %s: 304 %s = %q; want %q as on the 200", name, k, got, first.Header().Get(k))
			}
		}
		for _, k := range []string{"Content-Type", "Content-Length", "Link"} {
			if got := w.Header().Get(k); got != "" {
				t.Errorf("If-None-Match %s: 304 has %s %q; want none", name, k, got)
			}
		}
	}
	if w := serve(http.MethodGet, `"0000000000000000"`); w.Code != http.StatusOK || w.Body.String() != string(body) || w.Header().Get("ETag") != tag {
		t.Errorf("another tag: %d %q ETag %s; want 200 with the body and %s", w.Code, w.Body, w.Header().Get("ETag"), tag)
	}
	if w := serve(http.MethodHead, tag); w.Code != http.StatusNotModified {
		t.Errorf("HEAD with the tag: %d; want 304", w.Code)
	}
}

func TestCacheable(t *testing.T) {
	for _, tc := range []struct {
		method string
		status int
		want   bool
	}{
		{http.MethodGet, http.StatusOK, true},
		{http.MethodHead, http.StatusOK, true},
		{http.MethodGet, http.StatusCreated, false},
		{http.MethodGet, http.StatusNotFound, false},
		{http.MethodPost, http.StatusOK, false},
		{http.MethodPut, http.StatusOK, false},
		{http.MethodDelete, http.StatusOK, false},
	} {
		if got := Cacheable(httptest.NewRequest(tc.method, "/", nil), tc.status); got != tc.want {
			t.Errorf("Cacheable(%s, %d) = %v; want %v", tc.method, tc.status, got, tc.want)
		}
	}
}

// BenchmarkWrite is the cost the validator adds to a 200: the hash of the
// body and its headers, and the headers set, for answers the size of W2 (a
// material, about 600 bytes) and W1 (a page of 50 materials, about 19 KB).
func BenchmarkWrite(b *testing.B) {
	for _, size := range []int{600, 19 << 10} {
		b.Run(strconv.Itoa(size)+"B", func(b *testing.B) {
			body := make([]byte, size)
			for i := range body {
				body[i] = byte('a' + i%26)
			}
			r := httptest.NewRequest(http.MethodGet, "/materials", nil)
			h := http.Header{}
			w := discard{h: h}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				clear(h)
				h.Set("Content-Type", "application/json")
				Write(w, r, body)
			}
		})
	}
}

type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}
