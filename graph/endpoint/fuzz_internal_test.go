package endpoint

import (
	"mime"
	"runtime"
	"strings"
	"testing"
)

// FuzzAccept: whatever a client sends as Accept or Content-Type is
// negotiated or parsed without a panic, allocating in proportion to the
// header (which the server bounds, maxHeaderBytes), and negotiation only
// ever answers one of the media types the endpoint offers.
func FuzzAccept(f *testing.F) {
	for _, seed := range []string{"", "*/*", "application/graphql-response+json;q=0.9, application/json;q=0.8",
		"text/event-stream", "text/*;q=0.5,application/json;q=0.50", "application/json; charset=utf-8; a=b; c=\"d;e\"",
		strings.Repeat("a/b;q=0.1,", 2000), strings.Repeat(";x=1", 3000), "multipart/form-data; boundary=----x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, h string) {
		var a answer
		n := allocs(func() { a = negotiate(h) })
		if a.media != "" && a.media != mediaJSON && a.media != mediaGraphQLResponse {
			t.Fatalf("negotiate(%q) = %q", h, a.media)
		}
		if a.stream && !a.canStream {
			t.Fatalf("negotiate(%q) streams without accepting a stream", h)
		}
		n += allocs(func() { mime.ParseMediaType(h) })
		if limit := uint64(16*len(h) + 4096); n > limit {
			t.Errorf("a header of %d bytes allocated %d; want at most %d", len(h), n, limit)
		}
	})
}

// allocs returns the bytes one call of f allocates.
func allocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
