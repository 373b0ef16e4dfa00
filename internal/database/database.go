// Package database opens the ent client from a DATABASE_URL and migrates
// it, so that every command of the binary and every test opens the
// database the same way.
package database

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL driver, "pgx".
	_ "modernc.org/sqlite"             // Pure-Go SQLite driver, "sqlite".

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/migrate"
	_ "github.com/configurator/catalogue/ent/runtime" // Registers the privacy policies and hooks.
)

// Open connects to url: postgres://... (or postgresql://...) or
// sqlite://PATH. A SQLite file and its directory are created when missing.
// opts are passed to ent (tests use ent.Log to count queries).
func Open(ctx context.Context, rawURL string, opts ...ent.Option) (*ent.Client, error) {
	drv, lost, err := openDriver(rawURL)
	if err != nil {
		return nil, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := drv.DB().PingContext(pingCtx); err != nil {
		drv.Close()
		return nil, fmt.Errorf("connect to %s: %w", Redact(rawURL), err)
	}
	c := ent.NewClient(append([]ent.Option{ent.Driver(typedDriver{drv})}, opts...)...)
	remember(c, drv.DB(), drv.Dialect(), lost)
	return c, nil
}

// OpenSQL opens the database/sql handle of url and names its ent dialect;
// Open builds on it, and tests use it for raw SQL.
func OpenSQL(rawURL string) (*sql.DB, string, error) {
	drv, _, err := openDriver(rawURL)
	if err != nil {
		return nil, "", err
	}
	return drv.DB(), drv.Dialect(), nil
}

func openDriver(rawURL string) (*entsql.Driver, *lostMark, error) {
	switch {
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		db, lost, err := openSQL("pgx", genericPlans(rawURL), dialect.Postgres)
		if err != nil {
			return nil, nil, fmt.Errorf("open postgres: %w", err)
		}
		db.SetMaxOpenConns(20)
		db.SetMaxIdleConns(20)
		db.SetConnMaxIdleTime(5 * time.Minute)
		return entsql.OpenDB(dialect.Postgres, db), lost, nil
	case strings.HasPrefix(rawURL, "sqlite://"):
		path := strings.TrimPrefix(rawURL, "sqlite://")
		if path == "" {
			return nil, nil, fmt.Errorf("database url %q: sqlite:// needs a file path, for example sqlite://./data/configurator.db", rawURL)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, nil, fmt.Errorf("create database directory: %w", err)
		}
		// WAL lets readers run beside the single writer; busy_timeout makes
		// concurrent writers wait instead of failing; foreign keys are off by
		// default in SQLite.
		dsn := "file:" + path + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate"
		db, _, err := openSQL("sqlite", dsn, dialect.SQLite)
		if err != nil {
			return nil, nil, fmt.Errorf("open sqlite: %w", err)
		}
		db.SetMaxOpenConns(8)
		return entsql.OpenDB(dialect.SQLite, db), nil, nil
	default:
		return nil, nil, fmt.Errorf("database url %q: want postgres://... or sqlite://PATH", Redact(rawURL))
	}
}

// genericPlans adds plan_cache_mode=force_generic_plan to a PostgreSQL
// URL that does not set it, as a run-time parameter of every connection:
// pgx prepares each statement once per connection, and PostgreSQL plans a
// prepared statement again at every execution for as long as it thinks a
// plan for the actual values cheaper than its generic one. For a page
// after the first it always does: the generic plan prices an OFFSET
// parameter as a tenth of the table, so every request paid a full plan
// (a fifth of all CPU in W4 under perf, page p of all orders). The
// statements of this service filter by keys and ranges through indexes
// whose choice does not depend on the values (cmd/server TestListPlans
// checks every list's generic plan), so planning once per connection is
// what they need. A URL that names plan_cache_mode keeps its own choice.
func genericPlans(rawURL string) string {
	u, err := defaultParam(rawURL, "plan_cache_mode", "force_generic_plan")
	if err != nil {
		return rawURL // pgx reports the malformed URL
	}
	return u
}

// Migrate brings the schema of the database at rawURL, opened as c, up to
// date. Ent's migration adds tables, columns and indexes and drops the
// indexes the schema no longer declares (a replaced index would otherwise
// cost every write and mislead the planner); it never drops a table or a
// column, so an existing database keeps its rows. It then installs the
// triggers that keep derived data (order counts) exact, and the job
// queue's tables (migrateQueue). On PostgreSQL
// the whole runs under an advisory lock (lockMigrations), so replicas
// starting at once migrate one after the other.
func Migrate(ctx context.Context, c *ent.Client, rawURL string) error {
	unlock, err := lockMigrations(ctx, rawURL)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer unlock()
	// The migration inspects the database through database/sql's own rows,
	// which a client Open made wraps (typedDriver): it runs on the pool
	// itself.
	schema := c.Schema
	db := Pool(c)
	if db != nil {
		schema = migrate.NewSchema(entsql.OpenDB(dialectOf(rawURL), db))
	}
	if err := prepareCounts(ctx, c, dialectOf(rawURL)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := schema.Create(ctx, migrate.WithForeignKeys(true), migrate.WithDropIndex(true)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if db != nil {
		if err := migrateQueue(ctx, db, dialectOf(rawURL)); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	if err := installCounts(ctx, c, dialectOf(rawURL)); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// dialectOf names the ent dialect of a database URL.
func dialectOf(rawURL string) string {
	if strings.HasPrefix(rawURL, "sqlite://") {
		return dialect.SQLite
	}
	return dialect.Postgres
}

// Redact hides the password of a database URL, for logs and errors.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return rawURL
	}
	return u.Redacted()
}
