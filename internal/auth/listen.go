package auth

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/configurator/catalogue/ent/apitoken"
)

// RevokeChannel is the PostgreSQL notification channel on which Revoke
// announces a revocation, from inside the transaction that revokes, so
// PostgreSQL delivers it when, and only if, the revocation commits. Its
// payload is "SCHEMA:ID": the schema of the api_tokens table and the
// token record id. Channels are database-wide, and several deployments
// (or tests) may share a database in different schemas; a listener
// ignores the others' revocations.
const RevokeChannel = "api_token_revoked"

// notifySQL sends the revocation of token $2 on channel $1 from the
// current transaction. The schema is the one in which the api_tokens of
// this connection's search_path lives, so it names the same table as the
// UPDATE beside it.
const notifySQL = `SELECT pg_notify($1, (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = '` +
	apitoken.Table + `'::regclass) || ':' || $2)`

// scopeSQL returns the schema of the api_tokens table that the
// listener's connection sees; it is the payload prefix of the
// revocations that concern this process.
const scopeSQL = `SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = '` + apitoken.Table + `'::regclass`

// listenerName ends the application_name of the listener's connection.
const listenerName = "token listener"

// The listener's timing.
const (
	// heartbeatEvery is how often the listener proves that its
	// connection still works; each success lets the cache answer for
	// aliveFor more.
	heartbeatEvery = time.Second
	// heartbeatTimeout is how long a heartbeat may take before the
	// connection counts as lost.
	heartbeatTimeout = time.Second
	// connectTimeout bounds one connection attempt.
	connectTimeout = 10 * time.Second
	// backoffMin and backoffMax bound the wait between reconnection
	// attempts, which doubles from the first to the second after each
	// failure (with jitter, so replicas do not reconnect in step). The
	// ceiling is low so that the listener, and with it the cache, is back
	// within about two seconds of the database's return; an attempt on a
	// database that is down costs one refused connection.
	backoffMin = 100 * time.Millisecond
	backoffMax = 2 * time.Second
)

// listen keeps a connection that LISTENs for revocations, reconnecting
// with backoff, until ctx is done. The cache answers only while it is
// connected.
func (t *Tokens) listen(ctx context.Context, cfg *pgx.ConnConfig, log *slog.Logger) {
	backoff := backoffMin
	for {
		connected, err := t.listenOnce(ctx, cfg, log)
		t.cache.reset(time.Time{})
		t.listenerPID.Store(0)
		if ctx.Err() != nil {
			return
		}
		if connected {
			backoff = backoffMin
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		log.Warn("token revocation listener disconnected; the token cache is off until it is back", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		backoff = min(2*backoff, backoffMax)
	}
}

// listenOnce connects, LISTENs and serves notifications until the
// connection fails or ctx is done. It reports whether it got as far as
// listening.
func (t *Tokens) listenOnce(ctx context.Context, cfg *pgx.ConnConfig, log *slog.Logger) (bool, error) {
	// Notifications are handled as they arrive, also while a heartbeat
	// runs, so that a heartbeat's answer means that every notification
	// sent before it was handled. The schema is known before LISTEN.
	var schema string
	cfg = cfg.Copy()
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		switch n.Channel {
		case RevokeChannel:
			t.notified(schema, n.Payload)
		case KeysChannel:
			// Reloaded before the next notification or heartbeat is
			// handled, so a heartbeat still proves that the retirements
			// sent before it are in force.
			if n.Payload == schema {
				t.reloadKeys(ctx, log)
			}
		}
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn, err := t.dial(cctx, cfg)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if err := conn.QueryRow(cctx, scopeSQL).Scan(&schema); err != nil {
		return false, fmt.Errorf("find the %s table: %w", apitoken.Table, err)
	}
	beat := time.Now()
	for _, ch := range []string{RevokeChannel, KeysChannel} {
		if _, err := conn.Exec(cctx, "LISTEN "+ch); err != nil {
			return false, fmt.Errorf("listen: %w", err)
		}
	}
	// Key changes made before LISTEN took effect were not heard either.
	if _, err := t.signer.Reload(cctx); err != nil {
		return false, fmt.Errorf("reload signing keys: %w", err)
	}
	t.listenerPID.Store(conn.PgConn().PID())
	// Revocations committed before LISTEN took effect were not heard:
	// start from an empty cache.
	t.cache.reset(beat.Add(aliveFor))
	// The same for the open streams: read their tokens once.
	t.recheckSoon()
	for {
		wctx, cancel := context.WithDeadline(ctx, beat.Add(heartbeatEvery))
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return true, nil
		case err == nil:
			// Handled by OnNotification.
		case pgconn.Timeout(err):
			beat = time.Now()
			hctx, cancel := context.WithTimeout(ctx, heartbeatTimeout)
			err := conn.Ping(hctx)
			cancel()
			if ctx.Err() != nil {
				return true, nil
			}
			if err != nil {
				return true, fmt.Errorf("heartbeat: %w", err)
			}
			t.cache.renew(beat.Add(aliveFor))
		default:
			return true, fmt.Errorf("wait for notification: %w", err)
		}
	}
}

// notified evicts the token whose revocation payload names, when it is a
// token of schema, and ends its open streams. A payload it cannot read
// empties the whole cache and rereads the tokens of the open streams: an
// unneeded eviction only costs a read, a missed one would be a bug.
func (t *Tokens) notified(schema, payload string) {
	i := strings.LastIndexByte(payload, ':')
	if i < 0 {
		t.cache.flush()
		t.recheckSoon()
		return
	}
	id, err := strconv.Atoi(payload[i+1:])
	if err != nil {
		t.cache.flush()
		t.recheckSoon()
		return
	}
	if payload[:i] == schema {
		t.cache.evict(id)
		t.watches.revoked(id)
	}
}

// Listening reports whether the revocation listener is connected and
// listening, so that a revocation made by another process reaches this
// one within milliseconds (PostgreSQL only).
func (t *Tokens) Listening() bool { return t.listenerPID.Load() != 0 }
