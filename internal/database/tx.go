package database

import (
	"context"
	"database/sql"
	"sync"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/admit"
)

// Tx is one transaction seen two ways: as an ent client for the write
// itself, and as the database/sql transaction under it, for what ent does
// not do (the job queue inserts its jobs in it, internal/webhook). Both
// commit or roll back together, so a write and what it records (its
// event, its deliveries) are stored together or not at all.
type Tx struct {
	// Client runs ent statements in the transaction. The privacy rules and
	// hooks of ent/runtime apply to it as to any client.
	Client *ent.Client
	// SQL is the transaction itself (nil when Begin could not reach the
	// pool; see Begin).
	SQL *sql.Tx
	// Dialect is ent's name of the database: "postgres" or "sqlite3".
	Dialect string

	after            []func()
	commit, rollback func() error
}

// Begin starts a transaction on the pool of c. For a client Open did not
// make (a test's c.Debug()), whose pool is unknown, it is ent's own
// transaction and SQL is nil: nothing can be inserted beside it.
func Begin(ctx context.Context, c *ent.Client) (*Tx, error) {
	db := Pool(c)
	if db == nil {
		tx, err := c.Tx(ctx)
		if err != nil {
			return nil, err
		}
		return &Tx{Client: tx.Client(), commit: tx.Commit, rollback: tx.Rollback}, nil
	}
	dialectName := Dialect(c)
	// A transaction waits on the database for most of its time (its
	// statements, locks, the commit's flush): the request gives its place
	// in the server's queue up meanwhile (edge.Admit), and queues again
	// once it ends.
	back := sync.OnceFunc(admit.Wait(ctx))
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		back()
		return nil, err
	}
	drv := txDriver{typedDriver{entsql.NewDriver(dialectName, entsql.Conn{ExecQuerier: tx})}}
	end := func(f func() error) func() error { return func() error { defer back(); return f() } }
	return &Tx{Client: ent.NewClient(ent.Driver(drv)), SQL: tx, Dialect: dialectName, commit: end(tx.Commit), rollback: end(tx.Rollback)}, nil
}

// txDriver is ent's driver over a transaction that is already open: ent
// opens a transaction of its own for a write with edges, which here is
// the one it runs in (as with ent's own transactional client).
type txDriver struct{ typedDriver }

// Tx returns the transaction itself, with no commit or rollback of its own.
func (d txDriver) Tx(context.Context) (dialect.Tx, error) { return dialect.NopTx(d), nil }

// BeginTx is Tx (ent asks for it with options in some writes).
func (d txDriver) BeginTx(ctx context.Context, _ *sql.TxOptions) (dialect.Tx, error) {
	return d.Tx(ctx)
}

// Close leaves the pool open: it belongs to the client Begin started from.
func (txDriver) Close() error { return nil }

// AfterCommit runs fn once the transaction has committed (never when it
// rolls back): for what must not be seen before the data is, such as an
// in-process notification.
func (t *Tx) AfterCommit(fn func()) { t.after = append(t.after, fn) }

// Commit commits the transaction and runs the AfterCommit functions.
func (t *Tx) Commit() error {
	if err := t.commit(); err != nil {
		return err
	}
	for _, fn := range t.after {
		fn()
	}
	return nil
}

// Rollback rolls the transaction back.
func (t *Tx) Rollback() error { return t.rollback() }

// NextID takes the next id of table's identity column on PostgreSQL, so
// that a write can record what refers to a row before inserting the row
// itself, and end its transaction with the insert whose locks others
// wait for. It returns 0 where ids cannot be taken ahead (SQLite, whose
// single writer makes the order of statements immaterial).
func (t *Tx) NextID(ctx context.Context, table string) (int, error) {
	if t.SQL == nil || t.Dialect != dialect.Postgres {
		return 0, nil
	}
	var id int
	err := t.SQL.QueryRowContext(ctx, `SELECT nextval(pg_get_serial_sequence($1, 'id'))`, table).Scan(&id)
	return id, err
}
