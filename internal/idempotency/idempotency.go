// Package idempotency makes order creation safe to retry: a request that
// carries an Idempotency-Key (the header of Stripe's API and of the IETF
// draft) creates at most one order per owner and key, and a retry of the
// same request gets the first answer back, marked Idempotent-Replayed.
//
// The key is recorded in the same transaction as the order it created, so
// an order and its key exist together or not at all: a request cut off by
// a failure leaves no key behind and its retry simply runs. Two requests
// with the same key at once meet on the unique index of (owner, key): the
// second waits for the first's transaction and then replays its order.
// The same key with a different request (fields or files) is refused.
// Keys are kept for TTL in the database, so this holds across replicas and
// restarts.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/felixge/httpsnoop"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/idempotencykey"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/metrics"
)

const (
	// Header is the request header that carries the key.
	Header = "Idempotency-Key"
	// ReplayedHeader marks an answer that replays a first one.
	ReplayedHeader = "Idempotent-Replayed"
	// MaxKeyLen is the longest key accepted, in bytes.
	MaxKeyLen = 255
	// TTL is how long a key is remembered by default (IDEMPOTENCY_TTL
	// names another); a retry after it creates a new order.
	TTL = 24 * time.Hour
)

// now is the clock; tests move it.
var now = time.Now

type ctxKey struct{}

// request is what the middleware learns of a request and what the write
// reports back.
type request struct {
	key      string
	ttl      time.Duration
	replayed atomic.Bool
}

// Middleware reads the Idempotency-Key of a request into its context, for
// the order creation of either transport, with ttl, how long a key it
// records is remembered (0: TTL), and marks the answer of a replay with
// Idempotent-Replayed: true. A malformed key is refused through reject
// (an Invalid error) before the request goes further.
func Middleware(reject func(http.ResponseWriter, *http.Request, error), ttl time.Duration) func(http.Handler) http.Handler {
	if ttl <= 0 {
		ttl = TTL
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, ok := r.Header[Header]
			if !ok {
				next.ServeHTTP(w, r)
				return
			}
			key, err := parseKey(raw)
			if err != nil {
				reject(w, r, err)
				return
			}
			req := &request{key: key, ttl: ttl}
			next.ServeHTTP(marked(w, req), r.WithContext(context.WithValue(r.Context(), ctxKey{}, req)))
		})
	}
}

// parseKey reads the header's value: one value of 1 to MaxKeyLen visible
// ASCII characters, bare or as a quoted string (the draft's sf-string).
// Its errors name the header as their field.
func parseKey(values []string) (string, error) {
	bad := func(format string, args ...any) (string, error) {
		e := apperr.E(apperr.Invalid, format, args...)
		e.Field = Header
		return "", e
	}
	if len(values) != 1 {
		return bad("send one %s header, not %d", Header, len(values))
	}
	key := strings.TrimSpace(values[0])
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		key = key[1 : len(key)-1]
	}
	if key == "" || len(key) > MaxKeyLen {
		return bad("the %s header must be 1 to %d characters, got %d", Header, MaxKeyLen, len(key))
	}
	if strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
		return bad("the %s header must be visible ASCII characters", Header)
	}
	return key, nil
}

// marked wraps w so that it sets Idempotent-Replayed on the answer of a
// replay, just before the header is written (by WriteHeader, Write or
// ReadFrom); httpsnoop keeps the other interfaces of w (http.Flusher for
// Server-Sent Events, http.Hijacker for WebSocket upgrades, Unwrap).
func marked(w http.ResponseWriter, req *request) http.ResponseWriter {
	written := false
	mark := func() {
		if !written && req.replayed.Load() {
			w.Header().Set(ReplayedHeader, "true")
		}
		written = true
	}
	return httpsnoop.Wrap(w, httpsnoop.Hooks{
		WriteHeader: func(next httpsnoop.WriteHeaderFunc) httpsnoop.WriteHeaderFunc {
			return func(code int) { mark(); next(code) }
		},
		Write: func(next httpsnoop.WriteFunc) httpsnoop.WriteFunc {
			return func(b []byte) (int, error) { mark(); return next(b) }
		},
		ReadFrom: func(next httpsnoop.ReadFromFunc) httpsnoop.ReadFromFunc {
			return func(src io.Reader) (int64, error) { mark(); return next(src) }
		},
	})
}

// Key returns the Idempotency-Key of the request in ctx, "" when it has
// none.
func Key(ctx context.Context) string {
	if r, ok := ctx.Value(ctxKey{}).(*request); ok {
		return r.key
	}
	return ""
}

// markReplayed notes that the answer replays a first one, for the
// header and the metrics (http_idempotent_replays_total).
func markReplayed(ctx context.Context) {
	if r, ok := ctx.Value(ctxKey{}).(*request); ok {
		r.replayed.Store(true)
	}
	metrics.NoteReplayed(ctx)
}

// Fingerprint digests the parts of a request that make it the same
// request: the transport-independent fields in a fixed order, each
// length-prefixed so that no two lists of parts digest alike.
func Fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Replay returns the order a key already created for the owner (0 when
// the key is new or has expired) and marks the answer as a replay. The
// same key with another fingerprint is a KeyReused error.
func Replay(ctx context.Context, c *ent.Client, ownerID int, key, fingerprint string) (int, error) {
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	rec, err := c.IdempotencyKey.Query().
		Where(idempotencykey.OwnerID(ownerID), idempotencykey.Key(key)).Only(sys)
	if ent.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("look up idempotency key: %w", err)
	}
	if !rec.ExpiresAt.After(now()) {
		// Expired: forget it, the request runs anew.
		if err := c.IdempotencyKey.DeleteOneID(rec.ID).Exec(sys); err != nil && !ent.IsNotFound(err) {
			return 0, fmt.Errorf("drop expired idempotency key: %w", err)
		}
		return 0, nil
	}
	if rec.Fingerprint != fingerprint {
		return 0, apperr.E(apperr.KeyReused, "this %s was used with another request; use a new key for a new request", Header)
	}
	markReplayed(ctx)
	return rec.OrderID, nil
}

// ErrRace is returned by Record when another request recorded the same key
// first: the caller rolls its transaction back and replays that request's
// order.
var ErrRace = errors.New("idempotency key recorded by a concurrent request")

// Record remembers that key created orderID, in the transaction tx of the
// order's creation, for the TTL the request's middleware was given.
func Record(ctx context.Context, tx *ent.Client, ownerID int, key, fingerprint string, orderID int) error {
	now, ttl := now(), TTL
	if r, ok := ctx.Value(ctxKey{}).(*request); ok {
		ttl = r.ttl
	}
	err := tx.IdempotencyKey.Create().SetOwnerID(ownerID).SetKey(key).SetFingerprint(fingerprint).
		SetOrderID(orderID).SetCreatedAt(now).SetExpiresAt(now.Add(ttl)).
		Exec(privacy.DecisionContext(ctx, privacy.Allow))
	if ent.IsConstraintError(err) {
		return ErrRace
	}
	if err != nil {
		return fmt.Errorf("record idempotency key: %w", err)
	}
	return nil
}

// Expire deletes at most n of the keys expired at now, in one statement,
// and returns how many; the retention job (internal/webhook, Retain)
// calls it until fewer than n go.
func Expire(ctx context.Context, c *ent.Client, at time.Time, n int) (int, error) {
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	ids, err := c.IdempotencyKey.Query().Where(idempotencykey.ExpiresAtLT(at)).Order(idempotencykey.ByExpiresAt()).
		Limit(n).IDs(sys)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return c.IdempotencyKey.Delete().Where(idempotencykey.IDIn(ids...)).Exec(sys)
}
