package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// IdempotencyKey remembers an Idempotency-Key an owner sent with an order
// creation, so that a retry of the same request gets the first answer
// instead of a second order (internal/idempotency). It lives in the
// database, so it holds across replicas and restarts; internal/idempotency
// scopes every statement to the caller's owner itself.
type IdempotencyKey struct{ system }

// Fields of the IdempotencyKey.
func (IdempotencyKey) Fields() []ent.Field {
	return []ent.Field{
		field.Int("owner_id").Immutable(),
		field.String("key").MaxLen(255).NotEmpty().Immutable(),
		field.String("fingerprint").Immutable().
			Comment("SHA-256 of the request: transport, fields and file digests"),
		field.Int("order_id").Immutable().
			Comment("The order the request created, recorded in the same transaction"),
		field.Time("created_at").Immutable(),
		field.Time("expires_at").Immutable(),
	}
}

// Edges of the IdempotencyKey: the owner, so that an owner's keys go with
// it.
func (IdempotencyKey) Edges() []ent.Edge {
	return []ent.Edge{ownerEdge()}
}

// Indexes of the IdempotencyKey: one key per owner; another owner's equal
// key is another key.
func (IdempotencyKey) Indexes() []ent.Index {
	return []ent.Index{index.Fields("owner_id", "key").Unique(), index.Fields("expires_at")}
}
