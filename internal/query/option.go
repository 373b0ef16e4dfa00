package query

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/optionvariation"
)

// optionColumn prefixes the option's columns in its variations' rows.
const optionColumn = "option_"

// OptionWithVariations reads option id and its variations (in position
// order) in one statement, where eager loading takes two: the variations,
// filtered by the tenancy rules like any ent query, each row carrying
// its option's columns (a join on the option's key and the same owner, so
// another owner's option could never be read). It is what a read of one
// option with its parameter_list costs most (REST's
// /configurator-option/{id}, the shared benchmark's W5): one round trip
// and one statement built instead of two. An option without variations
// has no rows to carry it: ok is false, and the caller reads it as usual.
// The option it returns is plain data, with no client behind it: its
// fields and its loaded variations, not its other edges.
func OptionWithVariations(ctx context.Context, c *ent.Client, id int) (o *ent.ConfiguratorOption, ok bool, err error) {
	q := c.OptionVariation.Query().Where(optionvariation.ConfiguratorOptionID(id))
	q.Modify(func(s *sql.Selector) {
		t := sql.Table(configuratoroption.Table).As("option_row")
		s.Join(t).OnP(sql.And(
			sql.ColumnsEQ(t.C(configuratoroption.FieldID), s.C(optionvariation.FieldConfiguratorOptionID)),
			sql.ColumnsEQ(t.C(configuratoroption.FieldOwnerID), s.C(optionvariation.FieldOwnerID)),
		))
		for _, col := range configuratoroption.Columns {
			s.AppendSelectAs(t.C(col), optionColumn+col)
		}
	})
	vs, err := q.All(ctx)
	if err != nil || len(vs) == 0 {
		return nil, false, err
	}
	o, err = optionOf(vs[0])
	if err != nil {
		return nil, false, fmt.Errorf("read option %d from its variations: %w", id, err)
	}
	o.Edges.Variations = vs
	return o, true, nil
}

// optionOf reads the option's columns from a variation's row, as the
// drivers return them (PostgreSQL's and SQLite's differ in how they
// return times, JSON and integers).
func optionOf(v *ent.OptionVariation) (*ent.ConfiguratorOption, error) {
	r := row{v: v}
	o := &ent.ConfiguratorOption{
		ID: r.int(configuratoroption.FieldID), OwnerID: r.int(configuratoroption.FieldOwnerID),
		CreatedAt: r.time(configuratoroption.FieldCreatedAt), UpdatedAt: r.time(configuratoroption.FieldUpdatedAt),
		ConfiguratorID: r.int(configuratoroption.FieldConfiguratorID), Title: r.string(configuratoroption.FieldTitle),
		Type: configuratoroption.Type(r.string(configuratoroption.FieldType)), Position: r.int(configuratoroption.FieldPosition),
		CreatedBy: r.string(configuratoroption.FieldCreatedBy),
	}
	if s := r.bytes(configuratoroption.FieldSettings); s != nil {
		o.Settings = json.RawMessage(s)
	}
	return o, r.err
}

// row reads extra columns of an entity's row, keeping the first error.
type row struct {
	v interface {
		Value(string) (ent.Value, error)
	}
	err error
}

func (r *row) value(col string) any {
	x, err := r.v.Value(optionColumn + col)
	if err != nil && r.err == nil {
		r.err = err
	}
	return x
}

func (r *row) fail(col string, x any) {
	if r.err == nil {
		r.err = fmt.Errorf("column %s of type %T", col, x)
	}
}

func (r *row) int(col string) int {
	x := r.value(col)
	n, err := intOf(x)
	if err != nil && x != nil {
		r.fail(col, x)
	}
	return n
}

func (r *row) string(col string) string {
	switch x := r.value(col).(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	default:
		r.fail(col, x)
		return ""
	}
}

func (r *row) bytes(col string) []byte {
	switch x := r.value(col).(type) {
	case []byte:
		return append([]byte(nil), x...)
	case string:
		return []byte(x)
	case nil:
		return nil
	default:
		r.fail(col, x)
		return nil
	}
}

// timeLayouts are the forms SQLite may return a time in as text.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999"}

func (r *row) time(col string) time.Time {
	switch x := r.value(col).(type) {
	case time.Time:
		return x
	case string:
		for _, l := range timeLayouts {
			if t, err := time.Parse(l, x); err == nil {
				return t
			}
		}
		r.fail(col, x)
	default:
		r.fail(col, x)
	}
	return time.Time{}
}
