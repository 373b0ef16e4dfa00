package auth

import (
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/viewer"
)

// TestNotifiedPayload: a notification evicts its token only when it names
// this process's schema; one that cannot be read empties the cache.
func TestNotifiedPayload(t *testing.T) {
	for _, tc := range []struct {
		payload string
		want    map[string]bool // jwt -> still cached
	}{
		{"t_1:1", map[string]bool{"one": false, "two": true}},
		{"t_1:2", map[string]bool{"one": true, "two": false}},
		{"other:1", map[string]bool{"one": true, "two": true}},
		{"t:1:1", map[string]bool{"one": true, "two": true}},
		{"t_1:x", map[string]bool{"one": false, "two": false}},
		{"garbage", map[string]bool{"one": false, "two": false}},
	} {
		t.Run(tc.payload, func(t *testing.T) {
			tok := &Tokens{cache: newCache(10), now: time.Now}
			tok.cache.reset(time.Now().Add(time.Hour))
			tok.cache.put("one", viewer.Viewer{TokenID: 1}, time.Time{}, tok.cache.begin())
			tok.cache.put("two", viewer.Viewer{TokenID: 2}, time.Time{}, tok.cache.begin())
			tok.notified("t_1", tc.payload)
			for jwt, want := range tc.want {
				if _, got := tok.cache.get(jwt, time.Now()); got != want {
					t.Errorf("after %q, %s cached = %v; want %v", tc.payload, jwt, got, want)
				}
			}
		})
	}
}
