// Command sqliteload copies the product's tables from a PostgreSQL
// database holding the benchmark dataset (load-product.sql already run)
// into a SQLite database migrated by the product, so that bench/sqlite.sh
// can measure the embedded default on the same rows. Order counts are not
// copied: the SQLite triggers keep them while the orders go in.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/configurator/catalogue/internal/database"
)

// tables are copied in this order, parents before children.
var tables = []string{
	"owners", "configurators", "material_categories", "textures", "materials", "orders",
	"configurator_options", "option_variations", "configurator_forms", "form_fields",
	"option_sets", "option_set_options", "settings",
}

func main() {
	from := flag.String("from", "", "postgres://... URL of a product database holding the dataset")
	to := flag.String("to", "", "sqlite://PATH of a product database migrated by `server migrate`")
	flag.Parse()
	if *from == "" || !strings.HasPrefix(*to, "sqlite://") {
		log.Fatal("usage: sqliteload -from postgres://... -to sqlite://PATH")
	}
	src, _, err := database.OpenSQL(*from)
	if err != nil {
		log.Fatal(err)
	}
	dst, _, err := database.OpenSQL(*to)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, t := range tables {
		start := time.Now()
		n, err := copyTable(ctx, src, dst, t)
		if err != nil {
			log.Fatalf("copy %s: %v", t, err)
		}
		log.Printf("%s: %d rows in %s", t, n, time.Since(start).Round(time.Millisecond))
	}
}

// copyTable copies every row of table, the columns SQLite has, in one
// transaction.
func copyTable(ctx context.Context, src, dst *sql.DB, table string) (int, error) {
	cols, err := columns(ctx, dst, table)
	if err != nil {
		return 0, err
	}
	rows, err := src.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM %s", strings.Join(cols, ", "), table))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	tx, err := dst.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	ins, err := tx.PrepareContext(ctx, fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(cols, ", "), marks))
	if err != nil {
		return 0, err
	}
	n := 0
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, v := range vals {
			if t, ok := v.(time.Time); ok {
				vals[i] = t.UTC()
			}
		}
		if _, err := ins.ExecContext(ctx, vals...); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, tx.Commit()
}

// columns lists the columns of table in the SQLite database.
func columns(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT name FROM pragma_table_info('%s')", table))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, `"`+c+`"`)
	}
	return cols, rows.Err()
}
