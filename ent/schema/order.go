package schema

import (
	"encoding/json"

	"entgo.io/ent/dialect"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
)

// Order is an order placed from a configurator.
type Order struct{ ent.Schema }

// Mixin of the Order.
func (Order) Mixin() []ent.Mixin { return tenant() }

// Fields of the Order.
func (Order) Fields() []ent.Field {
	return []ent.Field{
		field.Int("configurator_id"),
		field.Float("price").Min(0).Annotations(entgql.OrderField("PRICE")),
		field.String("status").Default("new").Annotations(entgql.OrderField("STATUS")).
			Comment("Free string; the spec declares no states"),
		// Objects whose inner structure the spec leaves open, kept as raw
		// JSON: stored, and served back, as sent (rawJSON).
		field.JSON("customer_details", json.RawMessage{}).SchemaType(rawJSON).Annotations(entgql.Type("Map")),
		field.JSON("configurator_summary", json.RawMessage{}).SchemaType(rawJSON).Annotations(entgql.Type("Map")),
		field.String("configurator_snapshot").Optional().Nillable(),
		field.Strings("configurator_print_map").Optional(),
		field.String("invoice_url").Optional().Nillable(),
		field.String("order_storefront").Optional().Nillable(),
	}
}

// Edges of the Order.
func (Order) Edges() []ent.Edge {
	return []ent.Edge{configuratorEdge("orders")}
}

// Indexes of the Order: one per sort order of the list, and the
// configurator filter with its date range.
func (Order) Indexes() []ent.Index {
	return append(sortIndexes("id", "updated_at", "price", "status"), filterIndex("configurator_id"))
}

// Annotations of the Order.
func (Order) Annotations() []schema.Annotation { return readable() }

// rawJSON stores a JSON field as text on PostgreSQL (json, not jsonb), as
// SQLite does: the service never queries inside these objects, and text is
// returned exactly as written, with no conversion on each read and the
// same bytes from both databases.
var rawJSON = map[string]string{dialect.Postgres: "json"}
