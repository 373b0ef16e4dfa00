package database

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"entgo.io/ent/dialect"
)

// migrationLockClass is the first key of the advisory lock that
// serializes migrations ("cata" in ASCII); the second is a hash of the
// schema migrated, so installations in different schemas of one database
// (and parallel tests, each in a schema of its own) do not wait for each
// other.
const migrationLockClass = 0x63617461

// lockMigrations serializes migrations of one PostgreSQL schema across
// processes: when several replicas start at once on an empty database,
// the first migrates while the others wait, then each finds the schema up
// to date and changes nothing. Without it they would create the same
// tables and types at once and all but one would fail. The lock is a
// session-level advisory lock, held on a connection of its own (not one
// of the pool the migration uses) and released by unlock, or by
// PostgreSQL when the process dies. SQLite needs it too (ent inspects
// the schema before it writes, so two migrations both find a table
// missing): there it is an exclusive flock(2) of the database file
// (lockFile).
func lockMigrations(ctx context.Context, rawURL string) (unlock func(), err error) {
	if dialectOf(rawURL) != dialect.Postgres {
		return lockFile(strings.TrimPrefix(rawURL, "sqlite://"))
	}
	connector, err := pgConnector(rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("open the migration lock's connection: %w", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open the migration lock's connection: %w", err)
	}
	release := func() {
		conn.Close()
		db.Close()
	}
	// Waiting while another replica migrates is not a runaway statement:
	// a statement_timeout in the URL must not cut the wait short.
	if _, err := conn.ExecContext(ctx, "SET statement_timeout = 0"); err != nil {
		release()
		return nil, fmt.Errorf("prepare the migration lock: %w", err)
	}
	const key = "$1, hashtext(coalesce(current_schema(), ''))"
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock("+key+")", migrationLockClass); err != nil {
		release()
		return nil, fmt.Errorf("take the migration lock: %w", err)
	}
	return func() {
		// A failed unlock is released with the connection just after.
		conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock("+key+")", migrationLockClass)
		release()
	}, nil
}
