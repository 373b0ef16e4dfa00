package query

import (
	"context"
	"errors"

	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/ent/ordercount"
	"github.com/configurator/catalogue/internal/rule"
)

// OrderTotal is the total of an order list whose filters (wheres, applied
// together) select nothing but, perhaps, one configurator: the sum of the
// owner's order_counts rows, which the database keeps exact
// (ent/schema/ordercount.go), so the default listing of an owner with
// millions of orders costs a few rows instead of a scan of them all. Any
// other filter is counted over the matching index (the zero Total:
// COUNT(*)).
func OrderTotal(ctx context.Context, client *ent.Client, wheres ...*ent.OrderWhereInput) Total {
	var conf *int
	for _, where := range wheres {
		if where == nil {
			continue
		}
		w := *where
		if w.ConfiguratorID != nil {
			if conf != nil && *conf != *w.ConfiguratorID {
				return Total{}
			}
			conf, w.ConfiguratorID = w.ConfiguratorID, nil
		}
		if _, err := w.P(); !errors.Is(err, ent.ErrEmptyOrderWhereInput) {
			return Total{}
		}
	}
	t := Total{run: func(ctx context.Context) (int, error) {
		q := client.OrderCount.Query()
		if conf != nil {
			q = q.Where(ordercount.ConfiguratorID(*conf))
		}
		counts, err := q.Select(ordercount.FieldOrders).Ints(ctx)
		n := 0
		for _, c := range counts {
			n += c
		}
		return n, err
	}, stored: true}
	// In the page's statement the sum is a subquery of order_counts for
	// the owner the tenancy rule (rule.Owner) confines the orders to,
	// since ent's privacy rules apply to ent queries, not to SQL built
	// here; when it confines to none (system work) or refuses, the sum
	// runs on its own as an ent query, under the rules.
	owner, all, err := rule.Owner(ctx)
	if err != nil || all {
		return t
	}
	t.of = func(page *sql.Selector) sql.Querier {
		oc := sql.Table(ordercount.Table)
		sum := sql.Dialect(page.Dialect()).Select("CAST(COALESCE(SUM(" + oc.C(ordercount.FieldOrders) + "), 0) AS BIGINT)").From(oc).
			Where(sql.EQ(oc.C(ordercount.FieldOwnerID), owner))
		if conf != nil {
			sum.Where(sql.EQ(oc.C(ordercount.FieldConfiguratorID), *conf))
		}
		return sum
	}
	return t
}

// WithConfiguratorName loads what REST v1 shows of an order, its
// configurator's id and name, in the order's own statement: the name is
// a column of it (a subquery by the configurator's key and the order's
// owner, so a configurator of another owner could never be named)
// instead of a second query. ConfiguratorName reads it.
func WithConfiguratorName(q *ent.OrderQuery) *ent.OrderQuery {
	q.Modify(func(s *sql.Selector) {
		c := sql.Table(configurator.Table).As(configuratorNameColumn)
		name := sql.Dialect(s.Dialect()).Select(c.C(configurator.FieldName)).From(c).Where(sql.And(
			sql.ColumnsEQ(c.C(configurator.FieldID), s.C(order.FieldConfiguratorID)),
			sql.ColumnsEQ(c.C(configurator.FieldOwnerID), s.C(order.FieldOwnerID)),
		))
		s.AppendSelectExprAs(name, configuratorNameColumn)
	})
	return q
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
