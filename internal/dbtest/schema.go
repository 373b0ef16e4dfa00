package dbtest

import (
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/database"
)

// Schema describes the tables, columns, indexes and triggers of the
// database at rawURL, in a form that does not depend on the schema's name.
func Schema(t testing.TB, rawURL string) string {
	t.Helper()
	db, dialect, err := database.OpenSQL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var queries []string
	if dialect == "sqlite3" {
		queries = []string{`SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'`}
	} else {
		queries = []string{
			`SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
			   FROM information_schema.columns WHERE table_schema = current_schema()`,
			`SELECT indexname || ' ' || replace(indexdef, current_schema() || '.', '') FROM pg_indexes WHERE schemaname = current_schema()`,
			`SELECT tgname || ' ' || tgrelid::regclass::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			   JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND NOT t.tgisinternal`,
			`SELECT conname || ' ' || pg_get_constraintdef(c.oid) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
			   WHERE n.nspname = current_schema()`,
		}
	}
	var lines []string
	for _, q := range queries {
		lines = append(lines, rowsOf(t, db, q)...)
	}
	if len(lines) < 20 {
		t.Fatalf("schema of %s has only %d entries: %v", database.Redact(rawURL), len(lines), lines)
	}
	sort.Strings(lines)
	return fmt.Sprintf("%d entries: %s", len(lines), strings.Join(lines, "; "))
}

func rowsOf(t testing.TB, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
