// Package pglisten keeps the one PostgreSQL connection of a replica that
// LISTENs for notifications, on behalf of every part that needs them (the
// token revocations and key changes, internal/auth; the events,
// internal/events): one loop connects, LISTENs on every part's channels,
// hands each notification to its part as it arrives, proves with a
// heartbeat every second that the connection still works (a round trip
// that is no transaction), and reconnects
// with backoff when it does not.
package pglisten

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/configurator/catalogue/internal/database"
)

// The listener's timing.
const (
	// HeartbeatEvery is how often the listener proves that its
	// connection still works (Part.Alive).
	HeartbeatEvery = time.Second
	// heartbeatTimeout is how long a heartbeat may take before the
	// connection counts as lost.
	heartbeatTimeout = time.Second
	// connectTimeout bounds one connection attempt.
	connectTimeout = 10 * time.Second
	// backoffMin and backoffMax bound the wait between reconnection
	// attempts, which doubles from the first to the second after each
	// failure (with jitter, so replicas do not reconnect in step). The
	// ceiling is low so that the listener is back within about two
	// seconds of the database's return; an attempt on a database that is
	// down costs one refused connection.
	backoffMin = 100 * time.Millisecond
	backoffMax = 2 * time.Second
)

// Part is what one part of the service hears. Its functions run on the
// listener's goroutine, one at a time, in the order of the connection's
// messages: a heartbeat's Alive runs after every notification sent
// before the heartbeat was handled.
type Part struct {
	// Table names a table of the part; the schema in which the
	// connection's search_path finds it is handed to Channels' functions,
	// so that a part ignores the notifications of other deployments (or
	// tests) sharing the database in other schemas. A part without
	// channels (one that only hears Lost, say) may leave it empty.
	Table string
	// Channels handle the payloads of the part's channels.
	Channels map[string]func(ctx context.Context, schema, payload string)
	// Listening, when set, runs once every channel is listened to; what
	// was sent before since went unheard. An error drops the connection.
	Listening func(ctx context.Context, since time.Time) error
	// Alive, when set, runs after each heartbeat: every notification sent
	// before since was handled.
	Alive func(since time.Time)
	// Lost, when set, runs when the connection is lost or the listener
	// stops: nothing is heard until the next Listening.
	Lost func()
}

// Listener is the LISTEN connection of a replica. Add every part, then
// Start. A nil Listener (a database other than PostgreSQL) has no
// connection: Add and Start do nothing, and it never listens.
type Listener struct {
	cfg   *pgx.ConnConfig
	log   *slog.Logger
	parts []Part
	// Dial opens the connection (pgx.ConnectConfig); a test may replace
	// it before Start.
	Dial func(context.Context, *pgx.ConnConfig) (*pgx.Conn, error)
	pid  atomic.Uint32
}

// New returns the listener of the database at databaseURL, nil when it
// is not PostgreSQL. Without an sslmode in the URL it requires TLS, where
// pgx would try TLS and fall back to plain text ("prefer", which the
// pool's connections use): the listener keeps the stricter default that
// the service's first PostgreSQL driver had. The URL's search_path (as
// tests set it) is sent as a run-time parameter, so the listener sees the
// same tables. Its application_name is the URL's (or "catalogue")
// followed by " listener", so that operators can tell it in
// pg_stat_activity.
func New(databaseURL string, log *slog.Logger) (*Listener, error) {
	if !strings.HasPrefix(databaseURL, "postgres://") && !strings.HasPrefix(databaseURL, "postgresql://") {
		return nil, nil
	}
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	if q := u.Query(); !q.Has("sslmode") {
		q.Set("sslmode", "require")
		u.RawQuery = q.Encode()
	}
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("database url for the listener: %w", err)
	}
	cfg.RuntimeParams["application_name"] = cmp.Or(cfg.RuntimeParams["application_name"], "catalogue") + " listener"
	database.MarkLink(&cfg.Config) // its losses are outages like the pool's
	return &Listener{cfg: cfg, log: log, Dial: pgx.ConnectConfig}, nil
}

// Add has l listen for p; call before Start.
func (l *Listener) Add(p Part) {
	if l != nil {
		l.parts = append(l.parts, p)
	}
}

// PID is the backend pid of the connection while it listens, 0
// otherwise.
func (l *Listener) PID() uint32 {
	if l == nil {
		return 0
	}
	return l.pid.Load()
}

// Start keeps the connection in the background, reconnecting with
// backoff, until stop, which returns once the connection is closed and
// every part's Lost has run.
func (l *Listener) Start(ctx context.Context) (stop func()) {
	if l == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { l.run(ctx) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// run keeps the connection until ctx is done.
func (l *Listener) run(ctx context.Context) {
	backoff := backoffMin
	for {
		connected, err := l.once(ctx)
		l.pid.Store(0)
		for _, p := range l.parts {
			if p.Lost != nil {
				p.Lost()
			}
		}
		if ctx.Err() != nil {
			return
		}
		if connected {
			backoff = backoffMin
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		l.log.Warn("PostgreSQL listener disconnected: the token cache is off and subscriptions miss events until it is back", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		backoff = min(2*backoff, backoffMax)
	}
}

// once connects, LISTENs and serves notifications until the connection
// fails or ctx is done. It reports whether it got as far as listening.
func (l *Listener) once(ctx context.Context) (bool, error) {
	// The schemas are known before LISTEN, so that every notification is
	// handled as it arrives, also while a heartbeat runs.
	schemas := make([]string, len(l.parts))
	handlers := map[string]func(string){}
	for i, p := range l.parts {
		for ch, h := range p.Channels {
			handlers[ch] = func(payload string) { h(ctx, schemas[i], payload) }
		}
	}
	cfg := l.cfg.Copy()
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		if h := handlers[n.Channel]; h != nil {
			h(n.Payload)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn, err := l.Dial(cctx, cfg)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	for i, p := range l.parts {
		if p.Table == "" {
			continue
		}
		const scopeSQL = `SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = $1::text::regclass`
		if err := conn.QueryRow(cctx, scopeSQL, p.Table).Scan(&schemas[i]); err != nil {
			return false, fmt.Errorf("find the %s table: %w", p.Table, err)
		}
	}
	since := time.Now()
	for ch := range handlers {
		if _, err := conn.Exec(cctx, "LISTEN "+ch); err != nil {
			return false, fmt.Errorf("listen: %w", err)
		}
	}
	for _, p := range l.parts {
		if p.Listening != nil {
			if err := p.Listening(cctx, since); err != nil {
				return false, err
			}
		}
	}
	l.pid.Store(conn.PgConn().PID())
	return true, l.serve(ctx, conn, since)
}

// heartbeat proves that conn still works with a round trip that starts no
// transaction: a bare Sync message, which the server answers with
// ReadyForQuery. A query, even an empty one (pgx's Ping), is a transaction
// of its own: a heartbeat a second was an idle replica's one transaction a
// second (issue 42). Notifications that arrive meanwhile are handled as
// any other (OnNotification).
func heartbeat(ctx context.Context, conn *pgconn.PgConn) error {
	p := conn.StartPipeline(ctx)
	if err := p.Sync(); err != nil {
		p.Close()
		return err
	}
	if _, err := p.GetResults(); err != nil {
		p.Close()
		return err
	}
	return p.Close()
}

// serve waits for notifications (handled by OnNotification), with a
// heartbeat every HeartbeatEvery, until the connection fails (its error)
// or ctx is done (nil).
func (l *Listener) serve(ctx context.Context, conn *pgx.Conn, beat time.Time) error {
	for {
		wctx, cancel := context.WithDeadline(ctx, beat.Add(HeartbeatEvery))
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil:
		case pgconn.Timeout(err):
			beat = time.Now()
			hctx, cancel := context.WithTimeout(ctx, heartbeatTimeout)
			err := heartbeat(hctx, conn.PgConn())
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return fmt.Errorf("heartbeat: %w", err)
			}
			for _, p := range l.parts {
				if p.Alive != nil {
					p.Alive(beat)
				}
			}
		default:
			return fmt.Errorf("wait for notification: %w", err)
		}
	}
}
