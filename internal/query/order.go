package query

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/ent/ordercount"
	"github.com/configurator/catalogue/ent/orderdatecount"
	"github.com/configurator/catalogue/internal/rule"
)

// OrderTotal is the total of an order list whose filters (wheres, applied
// together) select nothing but, perhaps, one configurator and a range of
// whole UTC days of created_at (from a midnight, >=, to a midnight, <: the
// bounds REST start_date and end_date make). Without a range it is the
// sum of the owner's order_counts rows, without a configurator too, so the
// default listing of an owner with millions of orders costs a few rows
// instead of a scan of them all; with one, the sum of the range's rows of
// order_date_counts (whole months and the days at its ends, see
// dateSpans), a few dozen rows however many orders the range holds. Both
// tables the database keeps exact (ent/schema/ordercount.go,
// orderdatecount.go). Any other filter, or a bound that is not a UTC
// midnight, is counted over the matching index (the zero Total:
// COUNT(*)).
func OrderTotal(ctx context.Context, client *ent.Client, wheres ...*ent.OrderWhereInput) Total {
	f, ok := storedFilter(wheres)
	if !ok {
		return Total{}
	}
	t := Total{run: func(ctx context.Context) (int, error) {
		var counts []int
		var err error
		if f.dated {
			counts, err = client.OrderDateCount.Query().Where(func(s *sql.Selector) { s.Where(f.dates(s)) }).
				Select(orderdatecount.FieldOrders).Ints(ctx)
		} else {
			q := client.OrderCount.Query()
			if f.conf != nil {
				q = q.Where(ordercount.ConfiguratorID(*f.conf))
			}
			counts, err = q.Select(ordercount.FieldOrders).Ints(ctx)
		}
		n := 0
		for _, c := range counts {
			n += c
		}
		return n, err
	}, stored: true, seekBy: order.FieldCreatedAt}
	t.seek = func(ctx context.Context, skip, n int, desc bool, refine int) (seekAt, error) {
		return f.seek(ctx, client, skip, n, desc, refine)
	}
	// In the page's statement the sum is a subquery of the counts for
	// the owner the tenancy rule (rule.Owner) confines the orders to,
	// since ent's privacy rules apply to ent queries, not to SQL built
	// here; when it confines to none (system work) or refuses, the sum
	// runs on its own as an ent query, under the rules.
	owner, all, err := rule.Owner(ctx)
	if err != nil || all {
		return t
	}
	t.of = func(page *sql.Selector) sql.Querier {
		return f.sum(page.Dialect(), owner)
	}
	return t
}

// orderFilter is what OrderTotal reads of an order list's filters: at
// most one configurator, and whole UTC days of created_at from from
// (nil: the first) until until (nil: the last), when dated.
type orderFilter struct {
	conf        *int
	dated       bool
	from, until *time.Time
}

// storedFilter reads wheres into an orderFilter; ok is false when they
// filter anything else, or by bounds the counts cannot answer.
func storedFilter(wheres []*ent.OrderWhereInput) (f orderFilter, ok bool) {
	for _, where := range wheres {
		if where == nil {
			continue
		}
		w := *where
		if w.ConfiguratorID != nil {
			if f.conf != nil && *f.conf != *w.ConfiguratorID {
				return f, false
			}
			f.conf, w.ConfiguratorID = w.ConfiguratorID, nil
		}
		if t := w.CreatedAtGTE; t != nil {
			if !midnight(*t) {
				return f, false
			}
			if f.from == nil || t.After(*f.from) {
				f.from = t
			}
			f.dated, w.CreatedAtGTE = true, nil
		}
		if t := w.CreatedAtLT; t != nil {
			if !midnight(*t) {
				return f, false
			}
			if f.until == nil || t.Before(*f.until) {
				f.until = t
			}
			f.dated, w.CreatedAtLT = true, nil
		}
		if _, err := w.P(); !errors.Is(err, ent.ErrEmptyOrderWhereInput) {
			return f, false
		}
	}
	return f, true
}

// midnight tells whether t is the start of a UTC day.
func midnight(t time.Time) bool {
	t = t.UTC()
	return t.Equal(t.Truncate(24 * time.Hour))
}

// sum is the total as a statement of its own: the sum of the owner's
// rows of the counts that answer f.
func (f orderFilter) sum(dialect string, owner int) *sql.Selector {
	table, orders, ownerCol, confCol := ordercount.Table, ordercount.FieldOrders, ordercount.FieldOwnerID, ordercount.FieldConfiguratorID
	if f.dated {
		table, orders, ownerCol, confCol = orderdatecount.Table, orderdatecount.FieldOrders, orderdatecount.FieldOwnerID, orderdatecount.FieldConfiguratorID
	}
	t := sql.Table(table)
	sum := sql.Dialect(dialect).Select("CAST(COALESCE(SUM(" + t.C(orders) + "), 0) AS BIGINT)").From(t).
		Where(sql.EQ(t.C(ownerCol), owner))
	if f.conf != nil {
		sum.Where(sql.EQ(t.C(confCol), *f.conf))
	}
	if f.dated {
		sum.Where(f.dates(sum))
	}
	return sum
}

// dates selects the order_date_counts rows of f's configurator (if any)
// and range in s.
func (f orderFilter) dates(s *sql.Selector) *sql.Predicate {
	return f.within(s, dateSpans(f.from, f.until))
}

// within selects the order_date_counts rows of f's configurator (if any)
// in the given spans in s.
func (f orderFilter) within(s *sql.Selector, in []dateSpan) *sql.Predicate {
	var ps []*sql.Predicate
	if f.conf != nil {
		ps = append(ps, sql.EQ(s.C(orderdatecount.FieldConfiguratorID), *f.conf))
	}
	var spans []*sql.Predicate
	for _, d := range in {
		p := []*sql.Predicate{sql.EQ(s.C(orderdatecount.FieldMonth), d.month)}
		if d.from != "" {
			p = append(p, sql.GTE(s.C(orderdatecount.FieldDay), d.from))
		}
		if d.until != "" {
			p = append(p, sql.LT(s.C(orderdatecount.FieldDay), d.until))
		}
		spans = append(spans, sql.And(p...))
	}
	switch len(spans) {
	case 0:
		ps = append(ps, sql.False())
	case 1:
		ps = append(ps, spans[0])
	default:
		ps = append(ps, sql.Or(spans...))
	}
	if len(ps) == 1 {
		// Alone, not as And's only operand: And would write an Or
		// without its parentheses, and the Selector's AND with the owner
		// would bind tighter.
		return ps[0]
	}
	return sql.And(ps...)
}

// dateSpan is a run of order_date_counts rows of one kind (months or
// days) whose day is from from (empty: the first) until until (empty: the
// last), as YYYY-MM-DD text, the column's form on both databases.
type dateSpan struct {
	month       bool
	from, until string
}

// dateSpans splits the whole UTC days from from until until (nil: without
// that bound) into the days before its first whole month, its whole
// months, and the days after its last: at most two months' days and the
// months between, however long the range. An empty range has no spans.
func dateSpans(from, until *time.Time) []dateSpan {
	if from != nil && until != nil && !from.Before(*until) {
		return nil
	}
	day := func(t time.Time) string { return t.UTC().Format(time.DateOnly) }
	var spans []dateSpan
	months := dateSpan{month: true}
	var m0, m1 time.Time
	if from != nil {
		f := from.UTC()
		if m0 = time.Date(f.Year(), f.Month(), 1, 0, 0, 0, 0, time.UTC); m0.Before(f) {
			m0 = m0.AddDate(0, 1, 0)
		}
		months.from = day(m0)
	}
	if until != nil {
		u := until.UTC()
		m1 = time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
		months.until = day(m1)
	}
	if from != nil && until != nil && !m0.Before(m1) {
		return []dateSpan{{from: day(*from), until: day(*until)}}
	}
	if from != nil && from.Before(m0) {
		spans = append(spans, dateSpan{from: day(*from), until: day(m0)})
	}
	spans = append(spans, months)
	if until != nil && m1.Before(*until) {
		spans = append(spans, dateSpan{from: day(m1), until: day(*until)})
	}
	return spans
}

// WithConfiguratorName loads what REST v1 shows of an order, its
// configurator's id and name, in the order's own statement: the name is
// a column of it, from a LEFT JOIN by the configurator's key and the
// order's owner (so a configurator of another owner could never be
// named), instead of a second query. ConfiguratorName reads it.
//
// A join, not a subquery per row: PostgreSQL ran such a subquery as a
// sequential scan of the small configurators table for every order, and
// every rescan asks the kernel for the table's size (an lseek): about 5%
// of the machine's CPU under W4, a page of orders (perf record -a).
func WithConfiguratorName(q *ent.OrderQuery) *ent.OrderQuery {
	q.Modify(func(s *sql.Selector) {
		c := sql.Table(configurator.Table).As(configuratorNameColumn)
		s.LeftJoin(c).OnP(sql.And(
			sql.ColumnsEQ(c.C(configurator.FieldID), s.C(order.FieldConfiguratorID)),
			sql.ColumnsEQ(c.C(configurator.FieldOwnerID), s.C(order.FieldOwnerID)),
		))
		s.AppendSelectAs(c.C(configurator.FieldName), configuratorNameColumn)
	})
	return q.ScanWith(scanOrder, assignOrder)
}

// orderRow is where a row of an order lands besides the order's own
// fields: the integer and float columns and the optional text (number,
// NullString: database/sql converts into an int64, a float64
// or a *string through reflection, and allocates the string's pointer),
// the print map's JSON, read in place and decoded as ent decodes it, and
// the columns modifiers add (the configurator's name, a page's total),
// kept as the order's selected values. The order's optional text points
// into it, and its scan destinations are its own (dest), so a row costs
// one allocation besides the order's.
type orderRow struct {
	id, owner, conf               number[int64]
	price                         number[float64]
	snapshot, invoice, storefront sql.NullString
	printMap                      stdsql.RawBytes
	name                          sql.NullString
	total                         sql.NullInt64
	dest                          [16]any
}

// scanOrder is where each column of an order's row is scanned: straight
// into the order's fields where database/sql converts without a detour,
// into an orderRow otherwise; one allocation for the row where ent's own
// scan makes one per column, and a typed one for the two computed
// columns, which ent reads through their driver types.
func scanOrder(o *ent.Order, columns []string) ([]any, error) {
	r := &orderRow{}
	v := r.dest[:0]
	if len(columns) > len(r.dest) {
		v = make([]any, 0, len(columns))
	}
	v = v[:len(columns)]
	for i, c := range columns {
		switch c {
		case order.FieldID:
			v[i] = &r.id
		case order.FieldOwnerID:
			v[i] = &r.owner
		case order.FieldConfiguratorID:
			v[i] = &r.conf
		case order.FieldCreatedAt:
			v[i] = &o.CreatedAt
		case order.FieldUpdatedAt:
			v[i] = &o.UpdatedAt
		case order.FieldPrice:
			v[i] = &r.price
		case order.FieldStatus:
			v[i] = &o.Status
		case order.FieldCustomerDetails:
			v[i] = (*[]byte)(&o.CustomerDetails)
		case order.FieldConfiguratorSummary:
			v[i] = (*[]byte)(&o.ConfiguratorSummary)
		case order.FieldConfiguratorSnapshot:
			v[i] = &r.snapshot
		case order.FieldConfiguratorPrintMap:
			v[i] = &r.printMap
		case order.FieldInvoiceURL:
			v[i] = &r.invoice
		case order.FieldOrderStorefront:
			v[i] = &r.storefront
		case configuratorNameColumn:
			v[i] = &r.name
		case totalColumn:
			v[i] = &r.total
		default:
			if order.ValidColumn(c) {
				return nil, fmt.Errorf("order field %q has no typed scan", c)
			}
			v[i] = new(any) // a modifier's column, read by Value
		}
	}
	return v, nil
}

// assignOrder completes an order from the columns scanOrder placed in its
// orderRow.
func assignOrder(o *ent.Order, columns []string, values []any) error {
	for i, c := range columns {
		switch c {
		case order.FieldID:
			o.ID = int(values[i].(*number[int64]).v)
		case order.FieldOwnerID:
			o.OwnerID = int(values[i].(*number[int64]).v)
		case order.FieldConfiguratorID:
			o.ConfiguratorID = int(values[i].(*number[int64]).v)
		case order.FieldPrice:
			o.Price = values[i].(*number[float64]).v
		case order.FieldConfiguratorSnapshot:
			o.ConfiguratorSnapshot = optional(values[i])
		case order.FieldInvoiceURL:
			o.InvoiceURL = optional(values[i])
		case order.FieldOrderStorefront:
			o.OrderStorefront = optional(values[i])
		case order.FieldConfiguratorPrintMap:
			if b := *values[i].(*stdsql.RawBytes); len(b) > 0 {
				if err := unmarshalStrings(b, &o.ConfiguratorPrintMap); err != nil {
					return fmt.Errorf("unmarshal field configurator_print_map: %w", err)
				}
			}
		}
	}
	return nil
}

// optional is the text a NullString destination holds, nil for NULL.
func optional(v any) *string {
	if s := v.(*sql.NullString); s.Valid {
		return &s.String
	}
	return nil
}

// number is a scan destination of an integer or float column, read as
// database/sql reads an int64 or a float64, without its reflection when
// the driver hands over that very type (both drivers do), through Null
// (the same conversion) otherwise.
type number[T int64 | float64] struct{ v T }

// Scan implements database/sql's Scanner.
func (c *number[T]) Scan(src any) error {
	if v, ok := src.(T); ok {
		c.v = v
		return nil
	}
	var n stdsql.Null[T]
	if err := n.Scan(src); err != nil {
		return err
	}
	if !n.Valid {
		return fmt.Errorf("converting NULL to %T is unsupported", c.v)
	}
	c.v = n.V
	return nil
}

// configuratorNameColumn names the configurator's name in an order's row.
const configuratorNameColumn = "order_configurator"

// ConfiguratorName is the name of an order's configurator as REST v1
// shows it: from the loaded edge, or from the column WithConfiguratorName
// adds; empty when neither is there.
func ConfiguratorName(o *ent.Order) string {
	if c := o.Edges.Configurator; c != nil {
		return c.Name
	}
	v, err := o.Value(configuratorNameColumn)
	if err != nil {
		return ""
	}
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}
