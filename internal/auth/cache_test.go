package auth

import (
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/viewer"
)

func TestCache(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	on := func() time.Time { return time.Now().Add(time.Hour) }
	of := func(id int) viewer.Viewer { return viewer.Viewer{OwnerID: 7, Kind: viewer.KindOpenAPI, TokenID: id} }
	for _, tc := range []struct {
		name string
		max  int
		// setup runs on a cache that is on and empty.
		setup func(c *cache)
		at    time.Time
		want  map[string]bool // jwt -> get answers
	}{
		{"hit", 10, func(c *cache) {
			c.put("a", of(1), time.Time{}, c.begin())
		}, t0, map[string]bool{"a": true, "b": false}},
		{"off stores nothing", 10, func(c *cache) {
			c.reset(time.Time{})
			c.put("a", of(1), time.Time{}, c.begin())
			c.reset(on())
		}, t0, map[string]bool{"a": false}},
		{"off answers nothing", 10, func(c *cache) {
			c.put("a", of(1), time.Time{}, c.begin())
			c.mu.Lock()
			c.aliveUntil = time.Now().Add(-time.Millisecond) // the heartbeat ran out
			c.mu.Unlock()
		}, t0, map[string]bool{"a": false}},
		{"renew does not turn on a cache that was turned off", 10, func(c *cache) {
			c.put("a", of(1), time.Time{}, c.begin())
			c.reset(time.Time{})
			c.renew(on())
		}, t0, map[string]bool{"a": false}},
		{"reset turns it on empty", 10, func(c *cache) {
			c.put("a", of(1), time.Time{}, c.begin())
			c.reset(on())
			c.put("b", of(2), time.Time{}, c.begin())
		}, t0, map[string]bool{"a": false, "b": true}},
		{"valid until just before exp plus leeway", 10, func(c *cache) {
			c.put("a", of(1), t0.Add(time.Second), c.begin())
		}, t0.Add(time.Second - time.Nanosecond), map[string]bool{"a": true}},
		{"expired at exp plus leeway", 10, func(c *cache) {
			c.put("a", of(1), t0.Add(time.Second), c.begin())
			c.put("b", of(2), time.Time{}, c.begin())
		}, t0.Add(time.Second), map[string]bool{"a": false, "b": true}},
		{"evict drops every JWT of the token", 10, func(c *cache) {
			c.put("a", of(1), time.Time{}, c.begin())
			c.put("a2", of(1), time.Time{}, c.begin())
			c.put("b", of(2), time.Time{}, c.begin())
			c.evict(1)
		}, t0, map[string]bool{"a": false, "a2": false, "b": true}},
		{"a read from before an invalidation is not stored", 10, func(c *cache) {
			e := c.begin()
			c.evict(99)
			c.put("a", of(1), time.Time{}, e)
		}, t0, map[string]bool{"a": false}},
		{"a read from before a flush is not stored", 10, func(c *cache) {
			e := c.begin()
			c.flush()
			c.put("a", of(1), time.Time{}, e)
		}, t0, map[string]bool{"a": false}},
		{"least recently used goes first", 2, func(c *cache) {
			c.put("a", of(1), time.Time{}, c.begin())
			c.put("b", of(2), time.Time{}, c.begin())
			c.get("a", t0)
			c.put("c", of(3), time.Time{}, c.begin())
		}, t0, map[string]bool{"a": true, "b": false, "c": true}},
		{"storing again replaces", 2, func(c *cache) {
			c.put("a", of(1), time.Time{}, c.begin())
			c.put("a", of(1), time.Time{}, c.begin())
			c.put("b", of(2), time.Time{}, c.begin())
			c.evict(1)
		}, t0, map[string]bool{"a": false, "b": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCache(tc.max)
			c.reset(on())
			tc.setup(c)
			for jwt, want := range tc.want {
				v, got := c.get(jwt, tc.at)
				if got != want {
					t.Errorf("get(%q) hit = %v; want %v", jwt, got, want)
				}
				if got && v.OwnerID != 7 {
					t.Errorf("get(%q) = %+v; want the stored viewer", jwt, v)
				}
			}
			if n := c.lru.Len(); n != len(c.byJWT) || n > tc.max {
				t.Errorf("%d entries, %d indexed by JWT; want equal and at most %d", n, len(c.byJWT), tc.max)
			}
			byID := 0
			for _, els := range c.byID {
				byID += len(els)
			}
			if byID != c.lru.Len() {
				t.Errorf("%d entries indexed by token; want %d", byID, c.lru.Len())
			}
		})
	}
}
