package schema

import (
	"encoding/json"

	"entgo.io/ent/dialect"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"

	"github.com/configurator/catalogue/internal/valid"
)

// Order is an order placed from a configurator.
type Order struct{ owned }

// Fields of the Order.
func (Order) Fields() []ent.Field {
	return []ent.Field{
		field.Int("configurator_id"),
		field.Float("price").Min(0).Max(valid.MaxPrice).Annotations(entgql.OrderField("PRICE")).
			Comment("From 0 to 1000000000"),
		field.String("status").Default("new").Annotations(entgql.OrderField("STATUS")).
			Comment("Free string; the spec declares no states"),
		// Objects whose inner structure the spec leaves open, kept as raw
		// JSON in its stored form (rawJSONField).
		rawJSONField("customer_details", false),
		rawJSONField("configurator_summary", false),
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

// Annotations of the Order: read through the graph like every owned
// type, and TypedScan, since its page (internal/query) reads its rows
// typed.
func (Order) Annotations() []schema.Annotation { return append(readable(), TypedScan{}) }

// Indexes of the Order: one per sort order of the list, and the
// configurator filter with its date range.
func (Order) Indexes() []ent.Index {
	return append(sortIndexes("id", "updated_at", "price", "status"), filterIndex("configurator_id"))
}

// rawJSONField is a JSON object the service stores and serves without
// looking inside: written in its stored form (internal/valid.Stored, the
// form PostgreSQL's jsonb keeps), validated once on the way in, and read
// back as bytes, not as JSON to decode, which for a page of orders was a
// sixth of the CPU of the answer. The column is jsonb on PostgreSQL (json
// had no equality, so ent's lazy edge queries, SELECT DISTINCT, failed on
// any table holding one) and json (text) on SQLite.
func rawJSONField(name string, optional bool) ent.Field {
	f := field.Bytes(name).GoType(json.RawMessage{}).
		SchemaType(map[string]string{dialect.Postgres: "jsonb", dialect.SQLite: "json"}).
		Annotations(entgql.Type("Map"), entgql.Skip(entgql.SkipWhereInput))
	if optional {
		f = f.Optional()
	}
	return f
}
