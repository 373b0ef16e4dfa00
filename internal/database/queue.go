package database

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"entgo.io/ent/dialect"
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
