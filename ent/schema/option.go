package schema

import (
	"context"
	"regexp"

	"entgo.io/ent/dialect/sql"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	gen "github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configuratoroption"
	"github.com/configurator/catalogue/ent/optionvariation"
)

// colorRE is the #RRGGBB form the spec gives colours.
var colorRE = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// OptionTypes are the kinds of configurator option; the override rules
// depend on them.
var OptionTypes = []string{
	"select", "radio", "checkbox", "select_thumb", "arrows",
	"material", "text", "numeral", "patterns",
}

// ConfiguratorOption is one choice a customer makes in a configurator; its
// variations are its parameter_list.
type ConfiguratorOption struct{ owned }

// Fields of the ConfiguratorOption.
func (ConfiguratorOption) Fields() []ent.Field {
	return []ent.Field{
		field.Int("configurator_id"),
		field.String("title").NotEmpty().Annotations(entgql.OrderField("TITLE")),
		field.Enum("type").Values(OptionTypes...),
		rawJSONField("settings", true), // a JSON object, stored and served as raw JSON
		field.Int("position").Default(0).Annotations(entgql.OrderField("POSITION")),
		field.String("created_by").Default(""),
	}
}

// Edges of the ConfiguratorOption.
func (ConfiguratorOption) Edges() []ent.Edge {
	return []ent.Edge{
		configuratorEdge("options"),
		edge.To("variations", OptionVariation.Type),
		edge.From("sets", OptionSet.Type).Ref("options"),
	}
}

// Indexes of the ConfiguratorOption: one per sort order of the list
// (position first), and a configurator's options in position order.
func (ConfiguratorOption) Indexes() []ent.Index {
	return append(sortIndexes("position", "id", "updated_at", "title"), index.Fields("configurator_id", "owner_id", "position", "id"))
}

// Interceptors of the ConfiguratorOption: options are read in position
// order unless the query orders them otherwise (the options of an option
// set, for one, however they are loaded).
func (ConfiguratorOption) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{orderRows((*gen.ConfiguratorOptionQuery).Order, configuratoroption.FieldPosition, configuratoroption.FieldID)}
}

// OptionVariation is one entry of an option's parameter_list. Besides its
// name and order it carries the fields that option overrides may replace.
type OptionVariation struct{ owned }

// Fields of the OptionVariation.
func (OptionVariation) Fields() []ent.Field {
	return []ent.Field{
		field.Int("configurator_option_id"),
		field.String("name").Default(""),
		field.Int("position").Default(0).Annotations(entgql.OrderField("POSITION")),
		field.Bool("selected").Default(false),
		field.Int("model_id").Optional().Nillable(),
		field.Int("material_id").Optional().Nillable(),
		field.Int("material_category_id").Optional().Nillable(),
		field.String("text_value").Optional().Nillable(),
		field.Bool("custom_color").Optional().Nillable(),
		field.String("text_font_size").Optional().Nillable(),
		field.String("text_font_family").Optional().Nillable(),
		field.Int("text_color_category_id").Optional().Nillable(),
		field.Int("numerical_default").Optional().Nillable(),
	}
}

// Edges of the OptionVariation.
func (OptionVariation) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("option", ConfiguratorOption.Type).Ref("variations").
			Field("configurator_option_id").Unique().Required(),
	}
}

// Indexes of the OptionVariation: an option's parameter_list in position
// order.
func (OptionVariation) Indexes() []ent.Index {
	return []ent.Index{index.Fields("configurator_option_id", "owner_id", "position", "id")}
}

// OptionSet is a named set of a configurator's options.
type OptionSet struct{ owned }

// Fields of the OptionSet.
func (OptionSet) Fields() []ent.Field {
	return []ent.Field{
		field.Int("configurator_id"),
		field.String("name").NotEmpty().Annotations(entgql.OrderField("NAME")),
	}
}

// Edges of the OptionSet.
func (OptionSet) Edges() []ent.Edge {
	return []ent.Edge{
		configuratorEdge("option_sets"),
		edge.To("options", ConfiguratorOption.Type),
	}
}

// Indexes of the OptionSet: the list is by id.
func (OptionSet) Indexes() []ent.Index {
	return append(sortIndexes("id"), index.Fields("configurator_id"))
}

// Interceptors of the OptionVariation: a parameter_list is read in position
// order wherever it is loaded, eager loads included (entgql narrows those
// to the selected columns, so they cannot be sorted afterwards), unless the
// query orders it otherwise. Ordering by option first keeps the variations
// of several options (an eager load) in the order of their index.
func (OptionVariation) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{orderRows((*gen.OptionVariationQuery).Order,
		optionvariation.FieldConfiguratorOptionID, optionvariation.FieldPosition, optionvariation.FieldID)}
}

// defaultOrder orders by columns a query that has no order of its own.
// The service's own sorts (graph/page.go) and ent's generated ones come
// first in the query's terms; a sort the selector can see as columns (the
// service's) leaves the default out, so the list is read in the order of
// one index without extra sort keys.
func defaultOrder(columns ...string) func(*sql.Selector) {
	return func(s *sql.Selector) {
		if len(s.OrderColumns()) > 0 {
			return
		}
		for _, c := range columns {
			s.OrderBy(s.C(c))
		}
	}
}

// orderRows orders the queries of type Q by columns (defaultOrder) when
// they read rows (not counts, existence checks or aggregates, where an
// ORDER BY is meaningless or invalid); order is Q's Order method.
func orderRows[Q ent.Query, O ~func(*sql.Selector)](order func(Q, ...O) Q, columns ...string) ent.Interceptor {
	by := O(defaultOrder(columns...))
	return ent.InterceptFunc(func(next ent.Querier) ent.Querier {
		return ent.QuerierFunc(func(ctx context.Context, q ent.Query) (ent.Value, error) {
			if qc := ent.QueryFromContext(ctx); qc != nil {
				switch qc.Op {
				case ent.OpQueryAll, ent.OpQueryFirst, ent.OpQueryOnly:
					if q, ok := q.(Q); ok {
						order(q, by)
					}
				}
			}
			return next.Query(ctx, q)
		})
	})
}
