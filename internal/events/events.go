// Package events names what the service announces when data changes
// (order.created, material.deleted, ...), builds the JSON every receiver
// gets, and carries events to the GraphQL subscribers of every replica:
// a Hub fans them out in the process, and on PostgreSQL a notification
// sent from the writing transaction (Postgres, Listen) reaches the hubs
// of all replicas when, and only if, the write commits. The events
// themselves are rows of the outbox (ent.Event), written by internal/app
// in the transaction of the change.
package events

import (
	"encoding/json"
	"slices"
	"time"
)

// The event types.
const (
	OrderCreated    = "order.created"
	OrderUpdated    = "order.updated"
	MaterialCreated = "material.created"
	MaterialUpdated = "material.updated"
	MaterialDeleted = "material.deleted"
	TextureCreated  = "texture.created"
	TextureUpdated  = "texture.updated"
	TextureDeleted  = "texture.deleted"
)

// Types lists every event type, in the order the documentation gives them.
var Types = []string{
	OrderCreated, OrderUpdated,
	MaterialCreated, MaterialUpdated, MaterialDeleted,
	TextureCreated, TextureUpdated, TextureDeleted,
}

// Known reports whether t is an event type.
func Known(t string) bool { return slices.Contains(Types, t) }

// Event is one change, as subscribers receive it.
type Event struct {
	// ID is the outbox row's id.
	ID int
	// OwnerID is the tenant whose data changed: only its tokens see it.
	OwnerID int
	// Type is one of Types.
	Type string
	// ResourceID is the id of the order, material or texture.
	ResourceID int
	// Time is when the change was made.
	Time time.Time
}

// Deleted reports whether the event is a deletion, whose resource is
// gone.
func (e Event) Deleted() bool { return e.Type == MaterialDeleted || e.Type == TextureDeleted }

// Payload is the body of an event as webhooks send it:
// {"type": ..., "timestamp": RFC 3339, "data": ...}, where data is the
// resource in its REST v1 shape, or {"id": n} for a deletion.
func Payload(typ string, at time.Time, data any) ([]byte, error) {
	return json.Marshal(struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      any    `json:"data"`
	}{typ, at.UTC().Format(time.RFC3339), data})
}

// DeletedData is the data of a deletion event.
func DeletedData(id int) any {
	return struct {
		ID int `json:"id"`
	}{id}
}
