package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OrderDateCount is a part of the number of orders of one configurator of
// an owner created in one UTC month or one UTC day: the number is the sum
// of the period's rows, one per slot, as in OrderCount. It is derived
// data, kept exact by the same database triggers on orders
// (internal/database), so that the exact total of an order list filtered
// by a range of whole days (REST start_date and end_date) is the sum of
// its whole months and of the days at its ends, a few dozen rows however
// many orders the range holds, instead of a count of the range's index
// entries (bench/RESULTS.md, issue 27: 12,573 entries and 4.1 ms for W3
// at 2,000,000 orders).
type OrderDateCount struct{ derived }

// Fields of the OrderDateCount.
func (OrderDateCount) Fields() []ent.Field {
	return []ent.Field{
		field.Int("owner_id").Immutable(),
		field.Int("configurator_id").Immutable(),
		// month: the row counts the orders of the UTC month that starts on
		// day; otherwise those of the UTC day alone. Every order is counted
		// in one row of each kind.
		field.Bool("month").Immutable(),
		// day is a UTC date, YYYY-MM-DD (a date column on PostgreSQL, text
		// on SQLite; compared with the same text on both).
		field.String("day").Immutable().
			SchemaType(map[string]string{dialect.Postgres: "date", dialect.SQLite: "text"}),
		// slot tells a period's rows apart (see OrderCount).
		field.Int("slot").Default(0).Immutable(),
		// orders is this slot's share of the count; only the sum is
		// meaningful.
		field.Int("orders").Default(0),
	}
}

// Indexes of the OrderDateCount: one row per owner, configurator, period
// and slot, whose prefix a configurator's range reads; and the owner's
// periods across its configurators, for a range of every configurator.
func (OrderDateCount) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("owner_id", "configurator_id", "month", "day", "slot").Unique(),
		index.Fields("owner_id", "month", "day"),
	}
}
