package fast

import (
	"bytes"
	"testing"

	"github.com/configurator/catalogue/internal/bufpool"
)

// TestRenderedOwnsItsBytes checks that a rendered answer keeps its bytes
// once its scratch buffer is back in the pool and reused, and writes the
// same bytes every time it is marshaled.
func TestRenderedOwnsItsBytes(t *testing.T) {
	scratch := append(bufpool.Get(), `{"id":"1"}`...)
	r := finish(scratch)
	for range 4 {
		// Other requests take buffers from the pool and write into them.
		b := bufpool.Get()
		b = append(b, `{"id":"overwritten by another request"}`...)
		bufpool.Put(b)
	}
	for i := range 2 {
		var out bytes.Buffer
		r.MarshalGQL(&out)
		if got := out.String(); got != `{"id":"1"}` {
			t.Fatalf("marshal %d wrote %q; want %q", i+1, got, `{"id":"1"}`)
		}
	}
}
