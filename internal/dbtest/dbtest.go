// Package dbtest runs database tests on every backend the service supports:
// on SQLite always, and on PostgreSQL when TEST_DATABASE_URL is set (CI sets
// it). Each test gets a fresh, migrated database.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/database"
)

// EnvPostgres names the variable holding a PostgreSQL URL for tests, such
// as postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvPostgres = "TEST_DATABASE_URL"

// Backend is one database a test runs on.
type Backend struct {
	Name string
	// URL opens a fresh, empty database for one test.
	URL func(t testing.TB) string
}

// Backends returns SQLite, and PostgreSQL when TEST_DATABASE_URL is set.
func Backends() []Backend {
	b := []Backend{{Name: "sqlite", URL: sqliteURL}}
	if os.Getenv(EnvPostgres) != "" {
		b = append(b, Backend{Name: "postgres", URL: postgresURL})
	}
	return b
}

// Run runs fn as a subtest on each backend, with a fresh migrated client.
func Run(t *testing.T, fn func(t *testing.T, c *ent.Client)) {
	t.Helper()
	for _, b := range Backends() {
		t.Run(b.Name, func(t *testing.T) {
			fn(t, Open(t, b.URL(t)))
		})
	}
}

// Open opens and migrates the database at url, closed when the test ends.
func Open(t testing.TB, url string, opts ...ent.Option) *ent.Client {
	t.Helper()
	ctx := context.Background()
	c, err := database.Open(ctx, url, opts...)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := database.Migrate(ctx, c, url); err != nil {
		t.Fatalf("migrate test database: %v", err)
	}
	return c
}

// SQL opens the database at url without ent, for the statements a test
// runs behind the service's back; it is closed when the test ends.
func SQL(t testing.TB, url string) *sql.DB {
	t.Helper()
	db, _, err := database.OpenSQL(url)
	if err != nil {
		t.Fatalf("open %s: %v", database.Redact(url), err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func sqliteURL(t testing.TB) string {
	return "sqlite://" + filepath.Join(t.TempDir(), "test.db")
}

// postgresURL creates a schema of its own for the test and returns a URL
// whose search_path points at it; the schema is dropped afterwards. A set
// but unreachable TEST_DATABASE_URL fails the test: it never skips.
func postgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s=%s: %v", EnvPostgres, database.Redact(base), err)
	}
	admin.SetMaxIdleConns(0) // no connection is held while the test runs
	schema := "t_" + strings.ToLower(rand.Text())
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE")
		admin.Close()
	})
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("%s=%s is set but unusable: %v", EnvPostgres, database.Redact(base), err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Must returns v, or panics on err (which fails the running test); it
// keeps fixture code to one line per row.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Errorf("fixture: %w", err))
	}
	return v
}
