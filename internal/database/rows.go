package database

import (
	"context"
	stdsql "database/sql"

	entsql "entgo.io/ent/dialect/sql"
)

// typedDriver is ent's SQL driver whose result sets remember their column
// types. ent asks for the type of a column it does not know (the total a
// page carries in its own statement, query.Page) once per row, and
// database/sql rebuilds the types of every column at each call: on a page
// of 50 materials that was a fifth of the request's CPU. The types of a
// result set do not change from row to row, so the first answer serves
// them all.
type typedDriver struct{ *entsql.Driver }

// Query runs a query and wraps its rows.
func (d typedDriver) Query(ctx context.Context, query string, args, v any) error {
	if err := d.Driver.Query(ctx, query, args, v); err != nil {
		return err
	}
	if rows, ok := v.(*entsql.Rows); ok && rows.ColumnScanner != nil {
		rows.ColumnScanner = &typedRows{ColumnScanner: rows.ColumnScanner}
	}
	return nil
}

// typedRows is a result set that computes its column types once.
type typedRows struct {
	entsql.ColumnScanner
	types []*stdsql.ColumnType
	err   error
	done  bool
}

// ColumnTypes returns the column types of the result set.
func (r *typedRows) ColumnTypes() ([]*stdsql.ColumnType, error) {
	if !r.done {
		r.types, r.err = r.ColumnScanner.ColumnTypes()
		r.done = true
	}
	return r.types, r.err
}
