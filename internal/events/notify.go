package events

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

	"github.com/configurator/catalogue/ent/event"
	"github.com/configurator/catalogue/internal/database"
)

// Notifier carries an event recorded in a transaction to the
// subscribers, once that transaction commits.
type Notifier interface {
	Notify(ctx context.Context, tx *database.Tx, e Event) error
}

// Local publishes to a hub of this process after the commit: the notifier
// of a single process (SQLite).
type Local struct{ Hub *Hub }

// Notify publishes e to the hub once tx commits.
func (l Local) Notify(_ context.Context, tx *database.Tx, e Event) error {
	tx.AfterCommit(func() { l.Hub.Publish(e) })
	return nil
}

// Channel is the PostgreSQL notification channel of events. Its payload
// is "SCHEMA:ID:OWNER:RESOURCE:UNIXMILLI:TYPE"; a listener ignores the
// events of other schemas (other deployments or tests sharing the
// database).
const Channel = "catalogue_events"

// notifySQL sends payload $2 (without its schema) on channel $1 from the
// current transaction, prefixed with the schema of the events table.
const notifySQL = `SELECT pg_notify($1, (SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = '` +
	event.Table + `'::regclass) || ':' || $2)`

// scopeSQL is the schema of the events table a listener sees.
const scopeSQL = `SELECT relnamespace::regnamespace::text FROM pg_class WHERE oid = '` + event.Table + `'::regclass`

// Postgres notifies from the transaction itself: PostgreSQL delivers the
// notification to the listeners of every replica (Listen) when, and only
// if, the transaction commits.
type Postgres struct{}

// Notify sends e on Channel from tx.
func (Postgres) Notify(ctx context.Context, tx *database.Tx, e Event) error {
	payload := fmt.Sprintf("%d:%d:%d:%d:%s", e.ID, e.OwnerID, e.ResourceID, e.Time.UnixMilli(), e.Type)
	_, err := tx.SQL.ExecContext(ctx, notifySQL, Channel, payload)
	return err
}

// parse reads a notification's payload; ok is false for another schema's
// event or a payload it cannot read.
func parse(schema, payload string) (Event, bool) {
	parts := strings.SplitN(payload, ":", 6)
	if len(parts) != 6 || parts[0] != schema {
		return Event{}, false
	}
	var n [4]int64
	for i := range n {
		v, err := strconv.ParseInt(parts[i+1], 10, 64)
		if err != nil {
			return Event{}, false
		}
		n[i] = v
	}
	return Event{ID: int(n[0]), OwnerID: int(n[1]), ResourceID: int(n[2]), Time: time.UnixMilli(n[3]).UTC(), Type: parts[5]}, true
}

// Listen LISTENs on Channel with its own connection and publishes every
// event of its schema to hub, reconnecting with backoff until ctx is
// done. Events committed while it is disconnected reach webhooks (the
// outbox) but not the live subscriptions of this replica.
func Listen(ctx context.Context, databaseURL string, hub *Hub, log *slog.Logger) error {
	cfg, err := database.ListenConfig(databaseURL, "event listener")
	if err != nil {
		return err
	}
	go func() {
		backoff := 100 * time.Millisecond
		for {
			connected, err := listenOnce(ctx, cfg, hub)
			if ctx.Err() != nil {
				return
			}
			if connected {
				backoff = 100 * time.Millisecond
			}
			wait := backoff/2 + rand.N(backoff/2+1)
			log.Warn("event listener disconnected; subscriptions of this replica miss events until it is back", "err", err, "retry_in", wait)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			backoff = min(2*backoff, 2*time.Second)
		}
	}()
	return nil
}

// listenOnce serves notifications until the connection fails or ctx is
// done, and reports whether it got as far as listening.
func listenOnce(ctx context.Context, cfg *pgx.ConnConfig, hub *Hub) (bool, error) {
	var schema string
	cfg = cfg.Copy()
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		if e, ok := parse(schema, n.Payload); ok && n.Channel == Channel {
			hub.Publish(e)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, cfg)
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(cctx, scopeSQL).Scan(&schema); err != nil {
		return false, fmt.Errorf("find the %s table: %w", event.Table, err)
	}
	if _, err := conn.Exec(cctx, "LISTEN "+Channel); err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return true, nil
		case err == nil:
		case pgconn.Timeout(err):
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := conn.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				return true, fmt.Errorf("heartbeat: %w", err)
			}
		default:
			return true, fmt.Errorf("wait for notification: %w", err)
		}
	}
}
