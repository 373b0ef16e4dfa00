package endpoint

import (
	"mime"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// FuzzAccept: whatever a client sends as Accept or Content-Type is
// refused over its bounds (valid.MediaHeaders) as a BAD_REQUEST and
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
			if err != nil && apperr.KindOf(err) != apperr.Invalid {
				t.Fatalf("MediaHeaders(%s: %q) = %v; want a BAD_REQUEST", name, h, err)
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
