package graph

import (
	"context"

	"entgo.io/ent/dialect/sql"
	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/order"
)

// collector is an ent query that entgql can shape from a GraphQL selection.
type collector[Q any] interface {
	CollectFields(ctx context.Context, satisfies ...string) (Q, error)
}

// eager makes q load the edges its caller will read, and only those.
// Inside a GraphQL operation it hands the selection found at path below
// the current field (for example "data" of a page) to entgql's field
// collection, which loads every selected edge, aliases included, in one
// query per edge, and selects only the selected columns. Called directly,
// as REST does, it applies rest: the edges the v1 answer shows.
func eager[Q collector[Q]](ctx context.Context, q Q, rest func(Q) Q, path ...string) (Q, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !graphql.HasOperationContext(ctx) {
		return rest(q), nil
	}
	oc := graphql.GetOperationContext(ctx)
	field := fc.Field
	for _, name := range path {
		found := false
		for _, f := range graphql.CollectFields(oc, field.Selections, nil) {
			if f.Name == name {
				field, found = f, true
				break
			}
		}
		if !found {
			return q, nil
		}
	}
	return q.CollectFields(graphql.WithFieldContext(ctx, &graphql.FieldContext{Parent: fc, Field: field}))
}

// noEdges is the REST loader of the types whose v1 shape shows no edge:
// a material shows category_id and texture_id, not the records.
func noEdges[Q any](q Q) Q { return q }

// restOrder loads what REST v1 shows of an order, its configurator's id
// and name, in the order's own statement: the name is a column of it
// (a subquery by the configurator's key and the order's owner, so a
// configurator of another owner could never be named) instead of a second
// query. The presenter reads it with ConfiguratorName.
func restOrder(q *ent.OrderQuery) *ent.OrderQuery {
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
// shows it: from the loaded edge, or from the column restOrder adds;
// empty when neither is there.
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

// restOption loads what REST v1 shows with an option: its parameter_list,
// in position order (the OptionVariation interceptor orders every read).
func restOption(q *ent.ConfiguratorOptionQuery) *ent.ConfiguratorOptionQuery {
	return q.WithVariations()
}

// restOptionSet loads what REST v1 shows with an option set: the ids of
// its options, in position order (the ConfiguratorOption interceptor).
func restOptionSet(q *ent.OptionSetQuery) *ent.OptionSetQuery {
	return q.WithOptions(func(q *ent.ConfiguratorOptionQuery) { q.Select("id") })
}
