package auth

import (
	"container/list"
	"slices"
	"sync"
	"time"

	"github.com/configurator/catalogue/internal/viewer"
)

// CacheSize bounds the cache of resolved tokens: it keeps at most this
// many JWTs, dropping the least recently used first. An entry is a JWT
// (a few hundred bytes) and a viewer, so a full cache holds a few
// megabytes. More tokens in active use than this only costs the least
// active ones a token-record read per request.
const CacheSize = 10000

// aliveFor is how long one successful heartbeat of the revocation
// listener lets the cache answer. The listener confirms its connection
// every pglisten.HeartbeatEvery, so this only runs out when the connection is
// broken without an error (a silent network failure, detected by the
// heartbeat's timeout): it bounds how long such a failure can hide a
// revocation from this process.
const aliveFor = 2 * time.Second

// cache maps raw JWTs to the viewers they resolved to, so that a
// request with a known JWT skips both the JWT parsing and the token-record
// read. It is exact because a token's answer changes only when the token
// is revoked (kind, owner and home configurator are immutable, and the
// service never deletes token records), and every revocation evicts the
// token (see evict): the cache answers only while the listener that hears
// revocations is connected and has flushed whatever it might have missed.
//
// The zero value is not usable; see newCache.
type cache struct {
	mu  sync.Mutex
	max int
	// aliveUntil is when the cache stops answering unless the listener
	// renews it; zero (the start, and whenever the listener is
	// disconnected) means it answers nothing and stores nothing.
	aliveUntil time.Time
	// epoch counts invalidations. A resolution that read the database
	// stores its answer only if no invalidation happened since before
	// its read: the revocation that caused it may have committed after
	// the read, and its eviction then ran before the store.
	epoch uint64
	// version, when set, is the version of what verified the cached
	// JWTs (the key sets: Tokens.keyRemovals); versionAt is the one they
	// were verified under. Every use of the cache compares the two and
	// empties it when they differ, so a JWT whose key was removed is not
	// answered, whichever path removed the key and whether or not that
	// path thought to flush.
	version   func() uint64
	versionAt uint64
	byJWT     map[string]*list.Element
	byID      map[int][]*list.Element
	lru       *list.List // of *cacheEntry, most recently used first
}

// cacheEntry is one resolved JWT.
type cacheEntry struct {
	jwt string
	v   viewer.Viewer
	// until is when the JWT stops verifying (its exp plus leeway); zero
	// for a JWT without exp.
	until time.Time
}

func newCache(max int) *cache {
	return &cache{max: max, byJWT: map[string]*list.Element{}, byID: map[int][]*list.Element{}, lru: list.New()}
}

// get returns the viewer of jwt, if the cache may answer. An entry whose
// JWT has expired at now is dropped. Whether the cache is alive is judged
// by the real clock, as the listener's heartbeats are.
func (c *cache) get(jwt string, now time.Time) (viewer.Viewer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.follow()
	if !time.Now().Before(c.aliveUntil) {
		return viewer.Viewer{}, false
	}
	el, ok := c.byJWT[jwt]
	if !ok {
		return viewer.Viewer{}, false
	}
	e := el.Value.(*cacheEntry)
	if !e.until.IsZero() && !now.Before(e.until) {
		c.remove(el)
		return viewer.Viewer{}, false
	}
	c.lru.MoveToFront(el)
	return e.v, true
}

// begin returns the epoch to pass to put, taken before reading the
// database.
func (c *cache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.follow()
	return c.epoch
}

// put stores the viewer of jwt, read from the database after begin
// returned epoch, unless the cache is off or anything was invalidated
// since.
func (c *cache) put(jwt string, v viewer.Viewer, until time.Time, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A version that moved since begin empties the cache, which moves the
	// epoch: what was verified under the old keys is not stored.
	c.follow()
	if epoch != c.epoch || !time.Now().Before(c.aliveUntil) {
		return
	}
	if el, ok := c.byJWT[jwt]; ok {
		c.remove(el)
	}
	el := c.lru.PushFront(&cacheEntry{jwt: jwt, v: v, until: until})
	c.byJWT[jwt] = el
	c.byID[v.TokenID] = append(c.byID[v.TokenID], el)
	for c.lru.Len() > c.max {
		c.remove(c.lru.Back())
	}
}

// evict drops every JWT of token id: it has been revoked.
func (c *cache) evict(id int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	for _, el := range slices.Clone(c.byID[id]) {
		c.remove(el)
	}
}

// reset empties the cache and lets it answer until aliveUntil (zero: turn
// it off). The listener resets when it connects, since revocations may
// have gone unheard before, and when it loses its connection.
func (c *cache) reset(aliveUntil time.Time) {
	c.flush()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.aliveUntil = aliveUntil
}

// flush empties the cache, leaving it on or off.
func (c *cache) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
}

func (c *cache) flushLocked() {
	c.epoch++
	clear(c.byJWT)
	clear(c.byID)
	c.lru.Init()
}

// follow empties the cache when the version of what verified its JWTs
// moved; c.mu is held.
func (c *cache) follow() {
	if c.version == nil {
		return
	}
	if v := c.version(); v != c.versionAt {
		c.flushLocked()
		c.versionAt = v
	}
}

// renew lets the cache answer until aliveUntil; the listener renews after
// each heartbeat that proves it has heard every notification sent before
// the heartbeat. A cache that was turned off stays off: only reset turns
// it on, emptied.
func (c *cache) renew(aliveUntil time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.aliveUntil.IsZero() && aliveUntil.After(c.aliveUntil) {
		c.aliveUntil = aliveUntil
	}
}

// len returns the number of cached JWTs.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// remove drops one entry; c.mu is held.
func (c *cache) remove(el *list.Element) {
	e := el.Value.(*cacheEntry)
	delete(c.byJWT, e.jwt)
	c.lru.Remove(el)
	els := slices.DeleteFunc(c.byID[e.v.TokenID], func(x *list.Element) bool { return x == el })
	if len(els) == 0 {
		delete(c.byID, e.v.TokenID)
	} else {
		c.byID[e.v.TokenID] = els
	}
}
