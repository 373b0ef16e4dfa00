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

	"github.com/configurator/catalogue/ent"
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

// Ended returns why a context made by Watch ended because of its token:
// ErrRevoked, apperr.ErrTokenExpired, or another Unauthenticated error
// (a check found the token no longer valid, say its key retired), or nil
// when it has not ended or ended for another reason (the client left,
// the server stops, the database could not be asked).
func Ended(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause != nil && ctx.Err() != nil && apperr.KindOf(cause) == apperr.Unauthenticated {
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
	v      *viewer.Viewer
	// credential is the JWT v was resolved from (Authenticate), "" when
	// the stream's context holds none.
	credential string
}

// watchKey marks a context made by Watch with its watch, for Check.
type watchKey struct{}

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
//
// The token was checked before Watch is called (its request's, or its
// connection_init's), and a revocation between that check and the
// registration would end nothing: Watch registers first, then checks the
// token again as HTTP would now (Check), so that whatever moment a
// revocation takes effect, either the check sees it or the revocation
// finds the stream registered.
func (t *Tokens) Watch(ctx context.Context, v *viewer.Viewer) (context.Context, context.CancelFunc) {
	if v == nil {
		return ctx, func() {}
	}
	cctx, cancelCause := context.WithCancelCause(ctx)
	var timer *time.Timer
	if !v.Expires.IsZero() {
		timer = time.AfterFunc(time.Until(v.Expires), func() { cancelCause(apperr.ErrTokenExpired) })
	}
	w := &watch{cancel: cancelCause, v: v, credential: credentialOf(ctx)}
	wctx := context.WithValue(cctx, watchKey{}, w)
	if v.TokenID != 0 {
		t.watches.add(v.TokenID, w)
	}
	t.Check(wctx)
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

// Check answers whether the token of a stream (ctx, made by Watch, or
// derived from one) is still one HTTP would accept now, by the same
// resolution as HTTP's (Resolve: the cache while it is exact, otherwise
// the token's record), and ends the stream with the reason when it is
// not: its revocation, its expiry, a retired key (Unauthenticated), or
// an error reading the record (the database being unreachable: what
// HTTP would answer 503). Transports call it before they send each
// event, so that a stream sends nothing its token could not read over
// HTTP at that moment, whether or not a notification of the change has
// reached this process. A ctx that Watch did not make (an anonymous
// stream) passes: nil.
func (t *Tokens) Check(ctx context.Context) error {
	w, _ := ctx.Value(watchKey{}).(*watch)
	if w == nil {
		return nil
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	err := t.valid(ctx, w)
	if errors.Is(err, ErrRevoked) && w.v.TokenID != 0 {
		// Every stream of the token, not only the one that looked.
		t.watches.revoked(w.v.TokenID)
	}
	if err != nil {
		w.cancel(err)
	}
	return err
}

// valid answers whether the token of w would be accepted now.
func (t *Tokens) valid(ctx context.Context, w *watch) error {
	if !w.v.Expires.IsZero() && !t.now().Before(w.v.Expires) {
		return apperr.ErrTokenExpired
	}
	if w.credential != "" {
		v, err := t.Resolve(ctx, w.credential)
		if err == nil && v.TokenID != w.v.TokenID {
			err = errInvalidToken
		}
		return err
	}
	if w.v.TokenID == 0 {
		return nil
	}
	// A viewer put in the context without its JWT (system work, tests):
	// its record says whether it is revoked.
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	rec, err := t.client.APIToken.Get(sys, w.v.TokenID)
	switch {
	case ent.IsNotFound(err):
		return errInvalidToken
	case err != nil:
		return fmt.Errorf("load token %d: %w", w.v.TokenID, err)
	case rec.RevokedAt != nil:
		return ErrRevoked
	}
	return nil
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
