package database

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// QueueDriver is the job queue's (River's) driver over the service's own
// pool db, so that jobs are inserted in the transactions of the writes
// that make them (Tx.SQL).
func QueueDriver(db *sql.DB, dialectName string) riverdriver.Driver[*sql.Tx] {
	if dialectName == dialect.SQLite {
		return riversqlite.New(db)
	}
	return riverdatabasesql.New(db)
}

// ListeningQueueDriver is QueueDriver on PostgreSQL with a LISTEN
// connection of its own from pool: River then hears the jobs inserted (by
// any replica, NOTIFY in the inserting transaction), a leader's
// resignation and its queues' changes as they happen, and polls only as a
// fallback, so that an idle replica makes no statement to look for work.
func ListeningQueueDriver(db *sql.DB, pool *pgxpool.Pool) riverdriver.Driver[*sql.Tx] {
	return riverdatabasesql.NewWithPgxListener(db, pool)
}

// QueueListenPool is the pool of the job queue's LISTEN connection on
// the PostgreSQL database at rawURL: one connection, opened when River
// listens, with the URL's run-time parameters (its search_path finds the
// same tables). Closed by its caller once River has stopped.
func QueueListenPool(ctx context.Context, rawURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("job queue listener: %w", err)
	}
	cfg.MinConns, cfg.MaxConns = 0, 1
	cfg.ConnConfig.RuntimeParams["application_name"] = "catalogue queue listener"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("job queue listener: %w", err)
	}
	return pool, nil
}

// migrateQueue creates or updates the job queue's tables (river_job and
// its companions) beside the service's own, in the same schema.
func migrateQueue(ctx context.Context, db *sql.DB, dialectName string) error {
	m, err := rivermigrate.New(QueueDriver(db, dialectName), &rivermigrate.Config{
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	return nil
}
