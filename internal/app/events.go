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

// emit records, in t, the event typ of resource id: the outbox row with
// its payload, a delivery (and its queue job) for each enabled endpoint
// of the owner that wants typ, and the notification of subscribers,
// sent when t commits. A deletion passes a nil resource.
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
	if a.events.Queue != nil && t.SQL != nil {
		if err := a.deliveries(ctx, t, ev); err != nil {
			return err
		}
	}
	if a.events.Notify != nil {
		e := events.Event{ID: ev.ID, OwnerID: ev.OwnerID, Type: typ, ResourceID: id, Time: now}
		if err := a.events.Notify.Notify(ctx, t, e); err != nil {
			return fmt.Errorf("event %s: notify: %w", typ, err)
		}
	}
	return nil
}

// deliveries makes the deliveries of ev and inserts their jobs in t.
func (a *App) deliveries(ctx context.Context, t *database.Tx, ev *ent.Event) error {
	eps, err := t.Client.WebhookEndpoint.Query().Where(webhookendpoint.Enabled(true)).All(ctx)
	if err != nil {
		return fmt.Errorf("event %s: endpoints: %w", ev.Type, err)
	}
	var creates []*ent.WebhookDeliveryCreate
	for _, ep := range eps {
		if len(ep.EventTypes) == 0 || slices.Contains(ep.EventTypes, ev.Type) {
			creates = append(creates, t.Client.WebhookDelivery.Create().
				SetEndpointID(ep.ID).SetEventID(ev.ID).SetEventType(ev.Type))
		}
	}
	if len(creates) == 0 {
		return nil
	}
	ds, err := t.Client.WebhookDelivery.CreateBulk(creates...).Save(ctx)
	if err != nil {
		return fmt.Errorf("event %s: deliveries: %w", ev.Type, err)
	}
	ids := make([]int, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	if err := a.events.Queue.Enqueue(ctx, t.SQL, ids...); err != nil {
		return fmt.Errorf("event %s: queue: %w", ev.Type, err)
	}
	return nil
}

// emitOrder records typ for order id, read back in t with its
// configurator's name, as the payload shows it.
func (a *App) emitOrder(ctx context.Context, t *database.Tx, typ string, id int) error {
	o, err := query.WithConfiguratorName(t.Client.Order.Query().Where(order.ID(id))).Only(ctx)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	return a.emit(ctx, t, typ, id, o)
}

// emitMaterial records typ for material id, read back in t.
func (a *App) emitMaterial(ctx context.Context, t *database.Tx, typ string, id int) error {
	m, err := t.Client.Material.Query().Where(material.ID(id)).Only(ctx)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	return a.emit(ctx, t, typ, id, m)
}

// emitTexture records typ for texture id, read back in t.
func (a *App) emitTexture(ctx context.Context, t *database.Tx, typ string, id int) error {
	x, err := t.Client.Texture.Query().Where(texture.ID(id)).Only(ctx)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	return a.emit(ctx, t, typ, id, x)
}
