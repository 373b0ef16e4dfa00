package auth

import (
	"context"
	"time"
)

// Hooks for the tests of package auth_test.

// CacheLive reports whether the cache may answer now.
func (t *Tokens) CacheLive() bool {
	t.cache.mu.Lock()
	defer t.cache.mu.Unlock()
	return time.Now().Before(t.cache.aliveUntil)
}

// CacheLen is the number of cached JWTs.
func (t *Tokens) CacheLen() int { return t.cache.len() }

// FlushUsage writes the noted uses now.
func (t *Tokens) FlushUsage(ctx context.Context) error { return t.flushUsage(ctx) }

// SetClock sets the clock of the token service and of its signer.
func (t *Tokens) SetClock(now func() time.Time) {
	t.now = now
	t.signer.now = now
	if t.provider != nil {
		t.provider.now = now
	}
}

// SetFlushEvery sets how often Run writes the noted uses; call before Run.
func (t *Tokens) SetFlushEvery(d time.Duration) { t.flushEvery = d }

// ForgetReload lets the next token with an unknown kid reload the key
// set at once, as if KeysEvery had passed.
func (s *Signer) ForgetReload() {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	s.lastReload = time.Time{}
}

// Allocs returns the bytes one call of f allocates, the fewest over n
// calls.
func Allocs(n int, f func()) uint64 { return allocs(n, f) }
