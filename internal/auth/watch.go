package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// RecheckEvery is how often a serving process reads the revocation of
// the tokens that hold open streams when no notification can tell it:
// always on SQLite (where `server token revoke` writes from another
// process and nothing announces it), and on PostgreSQL while the
// revocation listener is disconnected. A revoked token's streams end
// within about this long; with a listener, within milliseconds.
const RecheckEvery = 2 * time.Second

// ErrRevoked is the cause with which a watched stream ends when its
// token is revoked (Watch); ErrTokenExpired (apperr) when it expires.
var ErrRevoked = apperr.E(apperr.Unauthenticated, "token revoked")

// Ended returns why a context made by Watch ended: ErrRevoked or
// apperr.ErrTokenExpired, or nil when it has not ended or ended for
// another reason (the client left, the server stops).
func Ended(ctx context.Context) error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrRevoked), errors.Is(cause, apperr.ErrTokenExpired):
		return cause
	}
	return nil
}

// watches are the open streams of a process, by token record id, so that
// a revocation ends every stream of the token.
type watches struct {
	mu   sync.Mutex
	byID map[int]map[*watch]struct{}
	// kick asks the recheck loop to read now (recheckSoon).
	kick chan struct{}
}

type watch struct {
	cancel context.CancelCauseFunc
}

// Watch is the hook that makes a long-lived stream (a WebSocket
// connection, a Server-Sent Events request) follow its caller's
// credential: it returns a context derived from ctx that is cancelled
// with cause ErrRevoked when v's token is revoked, and with cause
// apperr.ErrTokenExpired when v.Expires passes (zero: never). The
// transport ends the stream when the context is done and tells the
// client why from Ended (close 4403 on a WebSocket, a last error event
// on SSE). A revocation is seen as soon as this process hears it: at
// once when made here, a few milliseconds after its commit when
// PostgreSQL's notification carries it (see Revoke), and otherwise
// within RecheckEvery, as Run reads the watched tokens' records. A
// viewer without a token record (TokenID 0) is watched for its expiry
// only; a nil v returns ctx unchanged. Call cancel when the stream ends
// before ctx does.
func (t *Tokens) Watch(ctx context.Context, v *viewer.Viewer) (context.Context, context.CancelFunc) {
	if v == nil {
		return ctx, func() {}
	}
	wctx, cancelCause := context.WithCancelCause(ctx)
	var timer *time.Timer
	if !v.Expires.IsZero() {
		timer = time.AfterFunc(time.Until(v.Expires), func() { cancelCause(apperr.ErrTokenExpired) })
	}
	w := &watch{cancel: cancelCause}
	if v.TokenID != 0 {
		t.watches.add(v.TokenID, w)
	}
	context.AfterFunc(wctx, func() {
		if timer != nil {
			timer.Stop()
		}
		if v.TokenID != 0 {
			t.watches.remove(v.TokenID, w)
		}
	})
	return wctx, func() { cancelCause(context.Canceled) }
}

func (ws *watches) add(id int, w *watch) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	set := ws.byID[id]
	if set == nil {
		set = map[*watch]struct{}{}
		ws.byID[id] = set
	}
	set[w] = struct{}{}
}

func (ws *watches) remove(id int, w *watch) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	delete(ws.byID[id], w)
	if len(ws.byID[id]) == 0 {
		delete(ws.byID, id)
	}
}

// revoked ends every stream of token id.
func (ws *watches) revoked(id int) {
	ws.mu.Lock()
	ends := slices.Collect(maps.Keys(ws.byID[id]))
	ws.mu.Unlock()
	for _, w := range ends {
		w.cancel(ErrRevoked)
	}
}

// ids returns the token ids that have open streams.
func (ws *watches) ids() []int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return slices.Sorted(maps.Keys(ws.byID))
}

// recheckSoon asks the recheck loop to read the watched tokens now (the
// listener has just connected, or heard a notification it could not
// read), without waiting for its next tick.
func (t *Tokens) recheckSoon() {
	select {
	case t.watches.kick <- struct{}{}:
	default:
	}
}

// recheckLoop reads the revocation of the watched tokens every
// RecheckEvery while no listener tells of revocations (SQLite, or
// PostgreSQL with its listener disconnected), and at once when asked
// (recheckSoon), until ctx is done.
func (t *Tokens) recheckLoop(ctx context.Context, listening func() bool, log *slog.Logger) {
	tick := time.NewTicker(t.recheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.watches.kick:
		case <-tick.C:
			if listening() {
				continue
			}
		}
		if err := t.recheck(ctx); err != nil && ctx.Err() == nil {
			log.Warn("could not read the revocation of the tokens of open streams; retrying", "err", err)
		}
	}
}

// recheck ends the streams of every watched token that is revoked.
func (t *Tokens) recheck(ctx context.Context) error {
	ids := t.watches.ids()
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	for chunk := range slices.Chunk(ids, 500) {
		revoked, err := t.client.APIToken.Query().
			Where(apitoken.IDIn(chunk...), apitoken.RevokedAtNotNil()).IDs(sys)
		if err != nil {
			return fmt.Errorf("read revoked tokens: %w", err)
		}
		for _, id := range revoked {
			t.watches.revoked(id)
		}
	}
	return nil
}
