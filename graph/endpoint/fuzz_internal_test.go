package endpoint

import (
	"encoding/json"
	"mime"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// FuzzAccept: whatever a client sends as Accept or Content-Type is
// refused over its bounds (valid.MediaHeaders) with a coded 400 or 415 and
// passes within them, and is negotiated or parsed without a panic, allocating in proportion to the
// header (which the server bounds, maxHeaderBytes), and negotiation only
// ever answers one of the media types the endpoint offers.
func FuzzAccept(f *testing.F) {
	for _, seed := range []string{"", "*/*", "application/graphql-response+json;q=0.9, application/json;q=0.8",
		"text/event-stream", "text/*;q=0.5,application/json;q=0.50", "application/json; charset=utf-8; a=b; c=\"d;e\"",
		strings.Repeat("a/b;q=0.1,", 2000), strings.Repeat(";x=1", 3000), "multipart/form-data; boundary=----x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, h string) {
		// The bounds checked before either is parsed: a coded 400, and
		// nothing over them passes.
		for _, name := range []string{"Accept", "Content-Type"} {
			err := valid.MediaHeaders(http.Header{name: {h}})
			if k := apperr.KindOf(err); err != nil && k != apperr.Invalid && k != apperr.Unsupported {
				t.Fatalf("MediaHeaders(%s: %q) = %v; want a BAD_REQUEST or UNSUPPORTED_MEDIA_TYPE", name, h, err)
			}
			over := len(h) > valid.MaxAcceptBytes || strings.Count(h, ",") >= valid.MaxAcceptRanges
			if name == "Content-Type" {
				over = len(h) > valid.MaxContentTypeBytes || strings.Count(h, ";") > valid.MaxContentTypeParams
			}
			if (err == nil) == over {
				t.Fatalf("MediaHeaders(%s of %d bytes) = %v", name, len(h), err)
			}
		}
		var a answer
		n := allocs(func() { a = negotiate(h) })
		if a.media != "" && a.media != mediaJSON && a.media != mediaGraphQLResponse {
			t.Fatalf("negotiate(%q) = %q", h, a.media)
		}
		if a.stream && !a.canStream {
			t.Fatalf("negotiate(%q) streams without accepting a stream", h)
		}
		n += allocs(func() { mime.ParseMediaType(h) })
		// 8 KiB of slack: TotalAlloc is the whole process's, and the fuzzing
		// worker allocates beside the call now and then (allocs takes the
		// least of three calls for the same reason).
		if limit := uint64(16*len(h) + 8192); n > limit {
			t.Errorf("a header of %d bytes allocated %d; want at most %d", len(h), n, limit)
		}
	})
}

// allocs returns the bytes one call of f allocates: the fewest of three
// calls, since TotalAlloc also counts what other goroutines allocate.
func allocs(f func()) uint64 {
	least := ^uint64(0)
	var before, after runtime.MemStats
	for range 3 {
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// FuzzOverlong: the search for an over-long string never refuses a JSON
// text all of whose strings decode within the limit (it refuses only
// what the decoder would find too long), never panics on any text, and
// allocates nothing but the name it reports.
func FuzzOverlong(f *testing.F) {
	for _, seed := range []string{`{"query":"{ a }","variables":{"c":"abcdefghij"}}`, `{"a":"\u00e9\u00e9\u00e9\u00e9\u00e9"}`,
		`"\\\\\\\\\\"`, `{"x":"unterminated`, `["a","bcdefghijklmn",{"k":"v"}]`, `{"\"":"\"\"\"\"\"\"\"\"\""}`} {
		f.Add(seed)
	}
	const limit = 8
	f.Fuzz(func(t *testing.T, raw string) {
		var found bool
		n := allocs(func() { _, found = overlong([]byte(raw), limit) })
		if n > 8192+clipLength*4 {
			t.Errorf("overlong allocated %d bytes", n)
		}
		if !found || !json.Valid([]byte(raw)) {
			return
		}
		dec := json.NewDecoder(strings.NewReader(raw))
		for {
			tok, err := dec.Token()
			if err != nil {
				t.Fatalf("overlong(%q) refused a text whose strings are all within %d bytes", raw, limit)
			}
			if s, ok := tok.(string); ok && len(s) > limit {
				return
			}
		}
	})
}
