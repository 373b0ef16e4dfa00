package auth

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/ent/privacy"
)

// FlushEvery is how often Run writes the tokens' last_used_at: a
// request only notes its token's use in memory, and the notes are
// written in one transaction per interval (and when Run stops), so
// last_used_at is the time of the last use, written at most this late.
// A crash loses at most this much bookkeeping.
const FlushEvery = time.Minute

// usage collects the last use of each token until it is flushed. It
// holds one time per token used since the last flush, so it is bounded
// by the number of token records.
type usage struct {
	mu   sync.Mutex
	last map[int]time.Time
}

// note records that token id was used at.
func (u *usage) note(id int, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.last == nil {
		u.last = map[int]time.Time{}
	}
	if at.After(u.last[id]) {
		u.last[id] = at
	}
}

// take returns the notes and forgets them.
func (u *usage) take() map[int]time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	m := u.last
	u.last = nil
	return m
}

// flushUsage writes the noted uses to last_used_at, one UPDATE per token
// in one transaction; Run calls it every FlushEvery and when it stops. A
// token's last_used_at only moves forward, so replicas that flush in any
// order leave the latest use. When the write fails the notes are kept for
// the next flush and the error is returned.
func (t *Tokens) flushUsage(ctx context.Context) error {
	notes := t.usage.take()
	if len(notes) == 0 {
		return nil
	}
	if err := t.writeUsage(ctx, notes); err != nil {
		// Written with the next flush; a newer note of the same token wins.
		for id, at := range notes {
			t.usage.note(id, at)
		}
		return err
	}
	return nil
}

func (t *Tokens) writeUsage(ctx context.Context, notes map[int]time.Time) error {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	return inTx(ctx, t.client, "write token usage", func(tx *ent.Tx) error {
		// In id order, so that two replicas flushing at once lock the rows
		// in the same order and cannot deadlock.
		for _, id := range slices.Sorted(maps.Keys(notes)) {
			at := notes[id]
			err := tx.APIToken.Update().
				Where(apitoken.ID(id), apitoken.Or(apitoken.LastUsedAtIsNil(), apitoken.LastUsedAtLT(at))).
				SetLastUsedAt(at).Exec(ctx)
			if err != nil {
				return fmt.Errorf("write last use of token %d: %w", id, err)
			}
		}
		return nil
	})
}
