package auth

import (
	"context"
	"time"
)

// Hooks for the tests of package auth_test.

// FlushUsage writes the noted uses now.
func (t *Tokens) FlushUsage(ctx context.Context) error { return t.flushUsage(ctx) }

// SetClock sets the clock of the token service and of its signer.
func (t *Tokens) SetClock(now func() time.Time) {
	t.now = now
	t.signer.now = now
}

// SetFlushEvery sets how often Run writes the noted uses; call before Run.
func (t *Tokens) SetFlushEvery(d time.Duration) { t.flushEvery = d }
