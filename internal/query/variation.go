package query

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"github.com/go-json-experiment/json"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/optionvariation"
)

// WithVariations loads what REST v1 shows with an option, its
// parameter_list, in the option's own statement: the variations of its
// key and owner, in position order, aggregated as one JSON column,
// instead of ent's eager load, a second round trip that cost a third of
// an option's answer. Variations reads it.
func WithVariations(q *ent.ConfiguratorOptionQuery) *ent.ConfiguratorOptionQuery {
	q.Modify(func(s *sql.Selector) {
		v := sql.Table(optionvariation.Table).As(variationsColumn)
		of := sql.And(
			sql.ColumnsEQ(v.C(optionvariation.FieldConfiguratorOptionID), s.C(configuratoroption.FieldID)),
			sql.ColumnsEQ(v.C(optionvariation.FieldOwnerID), s.C(configuratoroption.FieldOwnerID)),
		)
		agg := sql.Dialect(s.Dialect()).Select()
		if s.Dialect() == dialect.Postgres {
			// A row's JSON names its columns, as ent's field tags do.
			agg.AppendSelectExpr(sql.Expr("json_agg(" + variationsColumn + " ORDER BY " + variationsColumn + "." + optionvariation.FieldPosition + ", " + variationsColumn + "." + optionvariation.FieldID + ")")).From(v).Where(of)
		} else {
			// SQLite keeps booleans as integers (spelled here as JSON) and
			// times as the driver's text (variationTime reads it).
			inner := sql.Select("*").From(v).Where(of).OrderBy(v.C(optionvariation.FieldPosition), v.C(optionvariation.FieldID))
			obj := "json_object("
			for i, c := range optionvariation.Columns {
				col := variationsColumn + "." + c
				switch c {
				case optionvariation.FieldSelected, optionvariation.FieldCustomColor:
					col = "json(CASE " + col + " WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)"
				}
				if i > 0 {
					obj += ", "
				}
				obj += "'" + c + "', " + col
			}
			agg.AppendSelectExpr(sql.Expr("json_group_array(" + obj + "))")).From(inner.As(variationsColumn))
		}
		s.AppendSelectExprAs(agg, variationsColumn)
	})
	return q
}

// variationsColumn names an option's aggregated variations in its row.
const variationsColumn = "option_variations_json"

// Variations is the parameter_list of an option as REST v1 shows it: the
// loaded edge, or the column WithVariations adds; none when neither is
// there. The column is this package's own statement: one it cannot read
// is a defect, a panic the recoverer answers 500.
func Variations(o *ent.ConfiguratorOption) []*ent.OptionVariation {
	if o.Edges.Variations != nil {
		return o.Edges.Variations
	}
	v, err := o.Value(variationsColumn)
	if err != nil {
		return nil
	}
	var raw []byte
	switch v := v.(type) {
	case string:
		raw = []byte(v)
	case []byte:
		raw = v
	default: // NULL: PostgreSQL's json_agg of no rows.
		return nil
	}
	var rows []struct {
		*ent.OptionVariation
		CreatedAt variationTime `json:"created_at"`
		UpdatedAt variationTime `json:"updated_at"`
	}
	if err := json.Unmarshal(raw, &rows); err != nil {
		panic(fmt.Errorf("variations of option %d: %w", o.ID, err))
	}
	vs := make([]*ent.OptionVariation, len(rows))
	for i, r := range rows {
		vs[i] = r.OptionVariation
		vs[i].CreatedAt, vs[i].UpdatedAt = time.Time(r.CreatedAt), time.Time(r.UpdatedAt)
	}
	return vs
}

// variationTime is a time in the JSON of WithVariations: RFC 3339 from
// PostgreSQL, or the text the SQLite driver wrote (time.Time.String, with
// the monotonic reading of a time.Now, " m=+0.26", which it drops).
type variationTime time.Time

func (t *variationTime) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		s, _, _ = strings.Cut(s, " m=")
		v, err = time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", s)
	}
	*t = variationTime(v)
	return err
}
