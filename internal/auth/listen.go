package auth

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/internal/pglisten"
)

// RevokeChannel is the PostgreSQL notification channel on which Revoke
// announces a revocation, from inside the transaction that revokes, so
// PostgreSQL delivers it when, and only if, the revocation commits. Its
// payload is "SCHEMA:ID": the schema of the api_tokens table and the
// token record id. Channels are database-wide, and several deployments
// (or tests) may share a database in different schemas; a listener
// ignores the others' revocations.
const RevokeChannel = "api_token_revoked"

// notifySQL sends on channel $1 the schema of the api_tokens table
// followed by $2. The schema is the one in which the api_tokens of this
// connection's search_path lives, so it names the same tables as the
// write beside it.
const notifySQL = `SELECT pg_notify($1, (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = '` +
	apitoken.Table + `'::regclass) || $2)`

// notify sends a notification on channel from tx when its dialect d
// (dialectOf) is PostgreSQL, which delivers it when, and only if, tx
// commits; its payload is the schema (notifySQL) followed by suffix.
func notify(ctx context.Context, tx *ent.Tx, d, channel, suffix string) error {
	if d != dialect.Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, notifySQL, channel, suffix); err != nil {
		return fmt.Errorf("notify %s: %w", channel, err)
	}
	return nil
}

// Listen has l carry revocations and key changes to t, which answers
// from its cache while l listens (PostgreSQL; a nil l is none, and the
// cache stays off, slower but still exact); call before l runs. log
// reports the key reloads that fail.
func (t *Tokens) Listen(l *pglisten.Listener, log *slog.Logger) {
	t.listener = l
	l.Add(pglisten.Part{
		Table: apitoken.Table,
		Channels: map[string]func(context.Context, string, string){
			RevokeChannel: func(_ context.Context, schema, payload string) { t.notified(schema, payload) },
			// Reloaded before the next notification or heartbeat is
			// handled, so a heartbeat still proves that the retirements
			// sent before it are in force.
			KeysChannel: func(ctx context.Context, schema, payload string) {
				if payload == schema {
					t.reloadKeys(ctx, log)
				}
			},
		},
		Listening: func(ctx context.Context, since time.Time) error {
			// Key changes made before LISTEN took effect were not heard.
			if _, err := t.signer.Reload(ctx); err != nil {
				return fmt.Errorf("reload signing keys: %w", err)
			}
			// Nor were the revocations: start from an empty cache, and
			// read the tokens of the open streams once.
			t.cache.reset(since.Add(aliveFor))
			t.recheckSoon()
			return nil
		},
		Alive: func(since time.Time) { t.cache.renew(since.Add(aliveFor)) },
		Lost:  func() { t.cache.reset(time.Time{}) },
	})
}

// notified evicts the token whose revocation payload names, when it is a
// token of schema, and ends its open streams. A payload it cannot read
// empties the whole cache and rereads the tokens of the open streams: an
// unneeded eviction only costs a read, a missed one would be a bug.
func (t *Tokens) notified(schema, payload string) {
	i := strings.LastIndexByte(payload, ':')
	id, err := strconv.Atoi(payload[i+1:])
	if i < 0 || err != nil {
		t.cache.flush()
		t.recheckSoon()
		return
	}
	if payload[:i] == schema {
		// The streams first: once the cache refuses the token over
		// HTTP, no stream of it may send.
		t.watches.revoked(id)
		t.cache.evict(id)
	}
}

// Listening reports whether the revocation listener is connected and
// listening, so that a revocation made by another process reaches this
// one within milliseconds (PostgreSQL only).
func (t *Tokens) Listening() bool { return t.listener.PID() != 0 }
