package app

import (
	"context"
	"fmt"
	"time"

	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/webhook"
)

// Events configures what a write records beside itself. Every write of an
// order, material or texture records its event in the outbox whatever is
// set here; the fields say who hears of it.
type Events struct {
	// Shape presents the resource of an event (*ent.Order, *ent.Material
	// or *ent.Texture) as its payload's data: REST v1's shape
	// (rest.EventData). Nil: the ent record as JSON.
	Shape func(resource any) any
	// Queue delivers webhooks (it dispatches the recorded events itself);
	// the operations use it to redeliver. Nil: redelivery is unavailable.
	Queue *webhook.Queue
	// Notify carries events to subscriptions; nil: none.
	Notify events.Notifier
	// Guard checks webhook endpoint URLs (nil: the strict default).
	Guard *webhook.Guard
	// MaxEndpoints is how many webhook endpoints one owner may keep
	// (WEBHOOK_MAX_ENDPOINTS; 0: webhook.DefaultMaxEndpoints).
	MaxEndpoints int
}

// SetEvents sets who hears of the writes; cmd/server calls it once at
// start, before serving.
func (a *App) SetEvents(e Events) { a.events = e }

// emit records the event typ of resource id in t, the write's
// transaction: the outbox row with its payload and the notification of
// subscribers, sent when the transaction commits. A deletion passes a nil
// resource. Webhook deliveries are made from the outbox afterwards, in
// batches (webhook.Queue.Dispatch), so that a write costs the same whether
// its owner has endpoints or not.
func (a *App) emit(ctx context.Context, t *database.Tx, typ string, id int, resource any) error {
	now := time.Now().UTC().Truncate(time.Millisecond)
	data := events.DeletedData(id)
	if resource != nil {
		data = resource
		if a.events.Shape != nil {
			data = a.events.Shape(resource)
		}
	}
	payload, err := events.Payload(typ, now, data)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	ev, err := t.Client.Event.Create().SetType(typ).SetPayload(payload).SetResourceID(id).SetCreatedAt(now).Save(ctx)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	if q := a.events.Queue; q != nil {
		// The dispatch of this replica wakes once the event is there to
		// read, rather than polling the outbox (webhook.DispatchFallback).
		t.AfterCommit(q.Wake)
	}
	if n := a.events.Notify; n != nil {
		e := events.Event{ID: ev.ID, OwnerID: ev.OwnerID, Type: typ, ResourceID: id, Time: now}
		if err := n.Notify(ctx, t, e); err != nil {
			return fmt.Errorf("event %s: notify: %w", typ, err)
		}
	}
	return nil
}

// emitRead records typ for resource id as load reads it back in the
// write's transaction, after the change: an order with its
// configurator's name, as the payload shows it.
func emitRead[T any](ctx context.Context, a *App, t *database.Tx, typ string, id int, load func(context.Context) (T, error)) error {
	v, err := load(ctx)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	return a.emit(ctx, t, typ, id, v)
}
