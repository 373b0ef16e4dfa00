package events

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/configurator/catalogue/ent/event"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/pglisten"
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

// notifySQL sends the payloads $2 (newline-separated, in order, without
// their schema) on channel $1, each prefixed with the schema of the
// events table.
const notifySQL = `SELECT pg_notify($1, s.name || ':' || u.payload)
  FROM unnest(string_to_array($2, chr(10))) WITH ORDINALITY AS u(payload, i),
       (SELECT relnamespace::regnamespace::text AS name FROM pg_class WHERE oid = '` + event.Table + `'::regclass) s
  ORDER BY u.i`

// Postgres carries events to the listeners of every replica (Listen)
// through PostgreSQL's NOTIFY, sent once, and only if, the writing
// transaction has committed: Run sends every notification waiting in one
// statement. Sent from the writing transaction itself, a NOTIFY makes its
// commit take a lock on the database that every notifying commit waits
// for, held across the commit's WAL flush; concurrent writers then spent
// most of their time waiting on it, whatever they wrote
// (bench/RESULTS.md, scale). The notifications waiting when the process
// dies are lost, as are those of a replica whose listener is down: live
// subscriptions miss them, webhooks do not (they come from the outbox).
type Postgres struct {
	db      *sql.DB
	log     *slog.Logger
	mu      sync.Mutex
	pending []string
	wake    chan struct{}
}

// NewPostgres returns the notifier of the database db; Run sends.
func NewPostgres(db *sql.DB, log *slog.Logger) *Postgres {
	return &Postgres{db: db, log: log, wake: make(chan struct{}, 1)}
}

// Notify has e sent on Channel once tx commits.
func (p *Postgres) Notify(_ context.Context, tx *database.Tx, e Event) error {
	payload := fmt.Sprintf("%d:%d:%d:%d:%s", e.ID, e.OwnerID, e.ResourceID, e.Time.UnixMilli(), e.Type)
	tx.AfterCommit(func() {
		p.mu.Lock()
		p.pending = append(p.pending, payload)
		p.mu.Unlock()
		select {
		case p.wake <- struct{}{}:
		default:
		}
	})
	return nil
}

// notifyBatch bounds the notifications of one statement.
const notifyBatch = 1000

// Run sends the notifications of committed transactions until ctx is
// done, then those still waiting. The notifications of the transactions
// that commit while a statement runs wait for the next: one statement
// at a time, so the database lock NOTIFY takes is never waited for by
// this replica's writes.
func (p *Postgres) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			p.send(context.WithoutCancel(ctx))
			return
		case <-p.wake:
			p.send(ctx)
		}
	}
}

// send sends the notifications waiting, in order.
func (p *Postgres) send(ctx context.Context) {
	p.mu.Lock()
	batch := p.pending
	p.pending = nil
	p.mu.Unlock()
	for len(batch) > 0 {
		n := min(len(batch), notifyBatch)
		if _, err := p.db.ExecContext(ctx, notifySQL, Channel, strings.Join(batch[:n], "\n")); err != nil {
			p.log.Warn("event notifications not sent; live subscriptions miss these events", "events", n, "err", err)
		}
		batch = batch[n:]
	}
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

// Listen has l publish every event of its schema to hub. Events
// committed while l is disconnected reach webhooks (the outbox) but not
// the live subscriptions of this replica.
func Listen(l *pglisten.Listener, hub *Hub) {
	l.Add(pglisten.Part{Table: event.Table, Channels: map[string]func(context.Context, string, string){
		Channel: func(_ context.Context, schema, payload string) {
			if e, ok := parse(schema, payload); ok {
				hub.Publish(e)
			}
		},
	}})
}
