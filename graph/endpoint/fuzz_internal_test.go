package endpoint

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
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

// FuzzParts: whatever a multipart body holds around a run of parts
// (prefix, then count parts whose headers carry pad bytes, then suffix),
// reading it as the multipart transport does (every part's headers, its
// body drained) under valid.BoundParts either ends in a coded 400 or 413
// or gives parts within the bounds, and allocates a bounded amount
// however long the headers the body holds (without the bound, Go's reader
// holds up to 10 MiB of them a part).
func FuzzParts(f *testing.F) {
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n{}\r\n"), uint16(10), uint16(3), []byte("--B--\r\n"))
	f.Add([]byte(""), uint16(9000), uint16(1), []byte("--B--"))
	f.Add([]byte("preamble\n"), uint16(8000), uint16(40), []byte("\n--B--\n"))
	f.Add([]byte("--B\n\n"), uint16(0), uint16(1001), []byte(""))
	f.Add([]byte("--B \t\r\nX: 1\r\n\r\n\r\n--Bx\r\n--B-x"), uint16(60000), uint16(2), []byte("--B--"))
	// A line Go's reader skips in the preamble, and a final delimiter
	// after a lone LF in a CRLF form, which it reads as data.
	f.Add([]byte("--B--x\r\n"), uint16(10), uint16(1017), []byte(""))
	f.Add([]byte("--B\r\n\r\nv\n--B--\r\n"), uint16(10), uint16(1017), []byte(""))
	f.Fuzz(func(t *testing.T, prefix []byte, pad, count uint16, suffix []byte) {
		unit := "--B\r\nContent-Disposition: form-data; name=\"f\"\r\nX-Pad: " + strings.Repeat("x", int(pad%(20<<10))) + "\r\n\r\nv\r\n"
		n := int(count % 1100)
		var err error
		var got []int
		used := allocs(func() {
			r, _ := http.NewRequest(http.MethodPost, "/graphql", io.MultiReader(bytes.NewReader(prefix),
				&repeated{unit: unit, n: n}, bytes.NewReader(suffix)))
			r.Header.Set("Content-Type", "multipart/form-data; boundary=B")
			parts := valid.BoundParts(r)
			got = got[:0]
			mr := multipart.NewReader(r.Body, "B")
			for {
				p, perr := mr.NextPart()
				if perr != nil {
					break
				}
				size := 0
				for k, vs := range p.Header {
					for _, v := range vs {
						size += len(k) + len(v)
					}
				}
				got = append(got, size)
				io.Copy(io.Discard, p)
			}
			err = parts.Err()
		})
		if k := apperr.KindOf(err); err != nil && k != apperr.Invalid && k != apperr.TooLarge {
			t.Fatalf("Parts.Err() = %v; want a BAD_REQUEST or PAYLOAD_TOO_LARGE", err)
		}
		total := 0
		for _, size := range got {
			total += size
			if size > valid.MaxPartHeaderBytes {
				t.Fatalf("a part's headers of %d bytes were read; the bound is %d", size, valid.MaxPartHeaderBytes)
			}
		}
		if len(got) > valid.MaxParts || total > valid.MaxPartHeadersTotal {
			t.Fatalf("%d parts with %d bytes of headers were read", len(got), total)
		}
		// The headers read, each part's reader and header map, and the
		// reader's buffers; the body's length does not count.
		if limit := uint64(4<<20 + 16*(len(prefix)+len(suffix))); used > limit {
			t.Errorf("%d parts of %d header bytes allocated %d; want at most %d", n, len(unit), used, limit)
		}
	})
}

// repeated reads unit n times without holding them all.
type repeated struct {
	unit   string
	n, off int
}

func (r *repeated) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	c := copy(p, r.unit[r.off:])
	if r.off += c; r.off == len(r.unit) {
		r.off, r.n = 0, r.n-1
	}
	return c, nil
}
