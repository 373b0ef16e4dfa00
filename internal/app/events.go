package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/material"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/ent/texture"
	"github.com/configurator/catalogue/ent/webhookendpoint"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/query"
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
	// Queue delivers webhooks; nil: no delivery is made (a process that
	// runs no queue, such as a test of the operations alone).
	Queue *webhook.Queue
	// Notify carries events to subscriptions; nil: none.
	Notify events.Notifier
	// Guard checks webhook endpoint URLs (nil: the strict default).
	Guard *webhook.Guard
}

// SetEvents sets who hears of the writes; cmd/server calls it once at
// start, before serving.
func (a *App) SetEvents(e Events) { a.events = e }

// guard is the URL check of webhook endpoints.
func (a *App) guard() *webhook.Guard {
	if a.events.Guard != nil {
		return a.events.Guard
	}
	return &webhook.Guard{}
}

// recorder records the events of one write in the write's transaction.
// It is made before the write, so that what it reads (the endpoints that
// want events) is read before the write takes its locks: the order
// inserts of one owner wait for each other's commit (the order-count
// trigger holds a row until then), and every statement after the insert
// lengthens that wait for all of them.
type recorder struct {
	a         *App
	t         *database.Tx
	endpoints []*ent.WebhookEndpoint
}

// recorder returns the event recorder of a write in t.
func (a *App) recorder(ctx context.Context, t *database.Tx) (*recorder, error) {
	r := &recorder{a: a, t: t}
	if a.events.Queue != nil && t.SQL != nil {
		eps, err := t.Client.WebhookEndpoint.Query().Where(webhookendpoint.Enabled(true)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("events: endpoints: %w", err)
		}
		r.endpoints = eps
	}
	return r, nil
}

// emit records the event typ of resource id: the outbox row with its
// payload, a delivery (and its queue job) for each enabled endpoint of
// the owner that wants typ, and the notification of subscribers, sent
// when the transaction commits. A deletion passes a nil resource.
func (r *recorder) emit(ctx context.Context, typ string, id int, resource any) error {
	now := time.Now().UTC().Truncate(time.Millisecond)
	data := events.DeletedData(id)
	if resource != nil {
		data = resource
		if r.a.events.Shape != nil {
			data = r.a.events.Shape(resource)
		}
	}
	payload, err := events.Payload(typ, now, data)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	ev, err := r.t.Client.Event.Create().SetType(typ).SetPayload(payload).SetResourceID(id).SetCreatedAt(now).Save(ctx)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	if err := r.deliveries(ctx, ev); err != nil {
		return err
	}
	if n := r.a.events.Notify; n != nil {
		e := events.Event{ID: ev.ID, OwnerID: ev.OwnerID, Type: typ, ResourceID: id, Time: now}
		if err := n.Notify(ctx, r.t, e); err != nil {
			return fmt.Errorf("event %s: notify: %w", typ, err)
		}
	}
	return nil
}

// deliveries makes the deliveries of ev and inserts their jobs.
func (r *recorder) deliveries(ctx context.Context, ev *ent.Event) error {
	var creates []*ent.WebhookDeliveryCreate
	for _, ep := range r.endpoints {
		if len(ep.EventTypes) == 0 || slices.Contains(ep.EventTypes, ev.Type) {
			creates = append(creates, r.t.Client.WebhookDelivery.Create().
				SetEndpointID(ep.ID).SetEventID(ev.ID).SetEventType(ev.Type))
		}
	}
	if len(creates) == 0 {
		return nil
	}
	ds, err := r.t.Client.WebhookDelivery.CreateBulk(creates...).Save(ctx)
	if err != nil {
		return fmt.Errorf("event %s: deliveries: %w", ev.Type, err)
	}
	ids := make([]int, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	if err := r.a.events.Queue.Enqueue(ctx, r.t.SQL, ids...); err != nil {
		return fmt.Errorf("event %s: queue: %w", ev.Type, err)
	}
	return nil
}

// emitOrder records typ for order id, read back in t with its
// configurator's name, as the payload shows it.
func (r *recorder) emitOrder(ctx context.Context, typ string, id int) error {
	o, err := query.WithConfiguratorName(r.t.Client.Order.Query().Where(order.ID(id))).Only(ctx)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	return r.emit(ctx, typ, id, o)
}

// emitMaterial records typ for material id, read back in t.
func (r *recorder) emitMaterial(ctx context.Context, typ string, id int) error {
	m, err := r.t.Client.Material.Query().Where(material.ID(id)).Only(ctx)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	return r.emit(ctx, typ, id, m)
}

// emitTexture records typ for texture id, read back in t.
func (r *recorder) emitTexture(ctx context.Context, typ string, id int) error {
	x, err := r.t.Client.Texture.Query().Where(texture.ID(id)).Only(ctx)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	return r.emit(ctx, typ, id, x)
}
