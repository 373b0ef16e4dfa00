package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Event is the outbox: one row per change of an order, material or
// texture, written in the transaction of the change itself, so that a
// write that rolls back records nothing and a committed one is never
// lost. Webhook deliveries and subscriptions are made from it.
type Event struct{ ent.Schema }

// Mixin of the Event.
func (Event) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}, OwnerMixin{}} }

// Fields of the Event.
func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.String("type").Immutable().Comment("order.created, material.deleted, ..."),
		field.Bytes("payload").Immutable().
			Comment(`The JSON sent to receivers: {"type", "timestamp", "data"}`),
		field.Int("resource_id").Immutable().Comment("The id of the order, material or texture"),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("dispatched_at").Optional().Nillable().
			Comment("When its webhook deliveries were made (internal/webhook.Queue.Dispatch)"),
	}
}

// Indexes of the Event: read by owner, newest last; the events still to
// dispatch, a partial index that stays as small as the backlog.
func (Event) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("owner_id", "id"),
		index.Fields("id").StorageKey("events_undispatched").Annotations(entsql.IndexWhere("dispatched_at IS NULL")),
	}
}

// Annotations of the Event.
func (Event) Annotations() []schema.Annotation { return hidden() }

// WebhookEndpoint is a URL of an owner's that receives the events it
// subscribed to, signed with its secret (Standard Webhooks); read and
// written with a dashboard token only (auth.Webhooks).
type WebhookEndpoint struct{ ownedHidden }

// Fields of the WebhookEndpoint.
func (WebhookEndpoint) Fields() []ent.Field {
	return []ent.Field{
		field.String("url").NotEmpty(),
		field.Strings("event_types").Optional().Comment("Empty: every event type"),
		field.Bool("enabled").Default(true),
		field.String("description").Default(""),
		field.String("secret").Sensitive().NotEmpty().Comment("whsec_ and the base64 key"),
	}
}

// Edges of the WebhookEndpoint.
func (WebhookEndpoint) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("deliveries", WebhookDelivery.Type).
			Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}

// WebhookDelivery is one event to be sent to one endpoint, and what
// happened when it was: made with the event, in its transaction, and
// worked by the job queue (internal/webhook).
type WebhookDelivery struct{ ownedHidden }

// Fields of the WebhookDelivery.
func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		field.Int("endpoint_id").Immutable(),
		field.Int("event_id").Immutable(),
		field.String("event_type").Immutable(),
		field.Enum("status").Values("PENDING", "SUCCEEDED", "FAILED").Default("PENDING"),
		field.Int("attempts").Default(0),
		field.Int("last_status_code").Optional().Nillable(),
		field.String("last_error").Optional().Nillable(),
		field.Time("next_attempt_at").Optional().Nillable(),
		field.Time("delivered_at").Optional().Nillable(),
	}
}

// Edges of the WebhookDelivery.
func (WebhookDelivery) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("endpoint", WebhookEndpoint.Type).Ref("deliveries").Field("endpoint_id").
			Unique().Required().Immutable(),
		edge.To("event", Event.Type).Field("event_id").Unique().Required().Immutable(),
	}
}

// Indexes of the WebhookDelivery: an endpoint's deliveries, and an
// owner's by status.
func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("endpoint_id", "id"),
		index.Fields("owner_id", "status", "id"),
		// The retention's test that no delivery names an event, and
		// PostgreSQL's check of the foreign key when an event is removed.
		index.Fields("event_id"),
	}
}
