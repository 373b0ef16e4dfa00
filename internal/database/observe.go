package database

import (
	"context"
	"database/sql"
	"runtime"
	"strings"
	"sync"
	"time"
	"weak"

	"entgo.io/ent/dialect"
	"github.com/XSAM/otelsql"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/telemetry"
)

// openSQL opens the pool of a driver. When tracing is on (telemetry.Enabled)
// the driver is wrapped so that each statement, transaction and new
// connection is a span; a statement's span holds its text, in which ent
// passes every value as a bind parameter ($1, ?), and never the values.
// Off, the driver is not wrapped at all.
//
// PostgreSQL's connections mark the errors of their sockets (MarkLink),
// which is how Unavailable knows an outage from any other io.EOF; the
// lostMark (nil for SQLite) is the pool's, for NoteLost.
func openSQL(driver, dsn, dialectName string) (*sql.DB, *lostMark, error) {
	system := semconv.DBSystemNamePostgreSQL
	if dialectName == dialect.SQLite {
		system = semconv.DBSystemNameSQLite
	}
	opts := []otelsql.Option{
		otelsql.WithAttributes(system),
		otelsql.WithSpanNameFormatter(spanName),
		otelsql.WithSpanOptions(otelsql.SpanOptions{OmitRows: true, OmitConnResetSession: true, DisableErrSkip: true}),
	}
	if dialectName != dialect.Postgres {
		if !telemetry.Enabled() {
			db, err := sql.Open(driver, dsn)
			return db, nil, err
		}
		db, err := otelsql.Open(driver, dsn, opts...)
		return db, nil, err
	}
	lost := new(lostMark)
	connector, err := pgConnector(dsn, lost)
	if err != nil {
		return nil, nil, err
	}
	if !telemetry.Enabled() {
		return sql.OpenDB(connector), lost, nil
	}
	return otelsql.OpenDB(connector, opts...), lost, nil
}

// pingIdle is how long a PostgreSQL connection of the pool may have been
// idle before it is pinged as it is taken again (pgx pings after a
// second). Each ping is a transaction: the few statements an idle replica
// makes (River's leader election and scheduling every 5 s, the fallback
// polls) each paid one, doubling its transactions (issue 42). A
// connection cut meanwhile (the server restarted) would answer its next
// statement with the server's goodbye (57P01), which database/sql cannot
// retry once the statement is sent: so once the listener has seen the
// database go (NoteLost), a connection idle since then is pinged all the
// same, and a dead one replaced, before a client's statement uses it.
const pingIdle = 30 * time.Second

// spanName names a statement's span by its first keyword (SELECT, INSERT,
// BEGIN, ...), and other calls by otelsql's method name.
func spanName(_ context.Context, method otelsql.Method, query string) string {
	query = strings.TrimSpace(query)
	if query == "" {
		return string(method)
	}
	if i := strings.IndexAny(query, " \t\n("); i > 0 {
		query = query[:i]
	}
	return strings.ToUpper(query)
}

// pools maps each client Open made (weakly, so a closed client is
// forgotten when it is collected) to its connection pool: ent's client
// does not expose it, and the metrics read its statistics (Pool).
var pools sync.Map // weak.Pointer[ent.Client] -> handle

// handle is what Open remembers of a client: its pool and dialect, and
// the pool's lostMark (PostgreSQL).
type handle struct {
	db      *sql.DB
	dialect string
	lost    *lostMark
}

func remember(c *ent.Client, db *sql.DB, dialect string, lost *lostMark) {
	k := weak.Make(c)
	pools.Store(k, handle{db, dialect, lost})
	runtime.AddCleanup(c, func(k weak.Pointer[ent.Client]) { pools.Delete(k) }, k)
}

// Pool returns the connection pool under a client Open made, for its
// statistics (sql.DBStats); nil for any other client.
func Pool(c *ent.Client) *sql.DB {
	h, _ := pools.Load(weak.Make(c))
	hd, _ := h.(handle)
	return hd.db
}

// Dialect returns ent's name of the database under a client Open made
// ("postgres" or "sqlite3"); "" for any other client.
func Dialect(c *ent.Client) string {
	h, _ := pools.Load(weak.Make(c))
	hd, _ := h.(handle)
	return hd.dialect
}

// NoteLost records that c's database was just seen out of reach: the
// listener lost its connection, or could not connect again. Whatever cut
// it (a restart, a failover) likely cut the pool's idle connections too,
// each of which would fail a client's next statement with the server's
// goodbye (57P01) instead of running it; so each connection idle since
// then is pinged before its next use (pingIdle). It does nothing for
// SQLite or a client Open did not make. Only the pool of c is affected,
// so that one deployment's outage costs another in the process nothing.
func NoteLost(c *ent.Client) {
	h, _ := pools.Load(weak.Make(c))
	if hd, _ := h.(handle); hd.lost != nil {
		hd.lost.mark()
	}
}
