package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OrderCount is a part of the number of orders of one configurator of an
// owner: the number is the sum of the key's rows, one per slot. It is
// derived data, kept exact by database triggers on orders
// (internal/database), so that the total of an owner's order list (which
// the v1 envelope promises on every page) costs a few rows rather than a
// scan of every order the owner has. The slots let concurrent orders of
// one configurator each add to a row no other open transaction holds,
// rather than all wait for one row's lock.
type OrderCount struct{ derived }

// Fields of the OrderCount.
func (OrderCount) Fields() []ent.Field {
	return []ent.Field{
		field.Int("owner_id").Immutable(),
		field.Int("configurator_id").Immutable(),
		// slot tells a key's rows apart; rows from before slots are slot 0.
		field.Int("slot").Default(0).Immutable(),
		// orders is this slot's share of the count; it may be negative
		// (a slot that took deletions), only the sum is meaningful.
		field.Int("orders").Default(0),
	}
}

// Indexes of the OrderCount: one row per owner, configurator and slot;
// the sums read its prefixes.
func (OrderCount) Indexes() []ent.Index {
	return []ent.Index{index.Fields("owner_id", "configurator_id", "slot").Unique()}
}
