package graph_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/webhook"
)

const createEndpoint = `mutation($in: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $in) { endpoint { id eventTypes } } }`

// endpointInput is the variables of createEndpoint for a public URL.
func endpointInput(n int, types ...string) map[string]any {
	return map[string]any{"in": map[string]any{"url": fmt.Sprintf("https://93.184.216.34/hook/%d", n), "eventTypes": types}}
}

// TestWebhookEndpointLimit: an owner keeps at most
// webhook.DefaultMaxEndpoints endpoints, even when they are created at
// once: of 40 concurrent creations exactly 16 succeed, the others are a
// CONFLICT naming the limit; another owner is not affected, and a
// deletion makes room again.
func TestWebhookEndpointLimit(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		dashB, _ := w.withEvents(t, events.NewHub(nil))
		const tries = 40
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			made     []gid
			refusals []gqlResponse
		)
		for i := range tries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := w.query(t, w.dashA, createEndpoint, endpointInput(i))
				mu.Lock()
				defer mu.Unlock()
				if len(res.Errors) > 0 {
					refusals = append(refusals, res)
					return
				}
				made = append(made, gid(i))
			}()
		}
		wg.Wait()
		if len(made) != webhook.DefaultMaxEndpoints || len(refusals) != tries-webhook.DefaultMaxEndpoints {
			t.Fatalf("%d of %d concurrent creations succeeded; want %d", len(made), tries, webhook.DefaultMaxEndpoints)
		}
		for _, r := range refusals {
			if r.code() != "CONFLICT" || !strings.Contains(r.Errors[0].Message, "at most 16 webhook endpoints") {
				t.Errorf("creation past the limit: %d %+v; want CONFLICT naming the limit of 16", r.Status, r.Errors)
				break
			}
		}
		if n := c.WebhookEndpoint.Query().CountX(dbtest.Sys); n != webhook.DefaultMaxEndpoints {
			t.Errorf("%d endpoints stored; want %d", n, webhook.DefaultMaxEndpoints)
		}
		var list struct{ WebhookEndpoints []struct{ ID gid } }
		w.ok(t, w.dashA, `{ webhookEndpoints { id } }`, nil, &list)
		if len(list.WebhookEndpoints) != webhook.DefaultMaxEndpoints {
			t.Fatalf("A lists %d endpoints; want %d", len(list.WebhookEndpoints), webhook.DefaultMaxEndpoints)
		}
		if res := w.query(t, dashB, createEndpoint, endpointInput(0)); len(res.Errors) > 0 {
			t.Errorf("another owner's first endpoint: %+v", res.Errors)
		}
		w.ok(t, w.dashA, `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }`, map[string]any{"id": int(list.WebhookEndpoints[0].ID)}, &struct{}{})
		if res := w.query(t, w.dashA, createEndpoint, endpointInput(99)); len(res.Errors) > 0 {
			t.Errorf("a creation after a deletion: %+v", res.Errors)
		}
		if res := w.query(t, w.dashA, createEndpoint, endpointInput(100)); res.code() != "CONFLICT" {
			t.Errorf("the 17th again: %+v; want CONFLICT", res.Errors)
		}
	})
}

// TestWebhookEndpointEventTypes: eventTypes is stored without repeats,
// in its order, on creation and update; a list longer than the known
// types is one BAD_REQUEST naming eventTypes and the bound, however long.
func TestWebhookEndpointEventTypes(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		w.withEvents(t, events.NewHub(nil))
		var made struct {
			CreateWebhookEndpoint struct {
				Endpoint struct {
					ID         gid
					EventTypes []string
				}
			}
		}
		w.ok(t, w.dashA, createEndpoint, endpointInput(1, "order.updated", "order.created", "order.updated", "order.updated"), &made)
		ep := made.CreateWebhookEndpoint.Endpoint
		if got := strings.Join(ep.EventTypes, ","); got != "order.updated,order.created" {
			t.Errorf("created eventTypes %s; want order.updated,order.created", got)
		}
		const update = `mutation($id: ID!, $types: [String!]) { updateWebhookEndpoint(id: $id, input: {eventTypes: $types}) { eventTypes } }`
		var upd struct{ UpdateWebhookEndpoint struct{ EventTypes []string } }
		w.ok(t, w.dashA, update, map[string]any{"id": int(ep.ID), "types": []string{"texture.deleted", "texture.deleted", "material.created"}}, &upd)
		if got := strings.Join(upd.UpdateWebhookEndpoint.EventTypes, ","); got != "texture.deleted,material.created" {
			t.Errorf("updated eventTypes %s; want texture.deleted,material.created", got)
		}
		stored := c.WebhookEndpoint.GetX(dbtest.Sys, int(ep.ID)).EventTypes
		if strings.Join(stored, ",") != "texture.deleted,material.created" {
			t.Errorf("stored eventTypes %v", stored)
		}
		every := append([]string(nil), events.Types...)
		w.ok(t, w.dashA, createEndpoint, endpointInput(2, every...), &made)
		for _, n := range []int{len(events.Types) + 1, 50000} {
			types := make([]string, n)
			for i := range types {
				types[i] = "order.created"
			}
			want := fmt.Sprintf("at most %d event types", len(events.Types))
			for _, op := range []struct {
				q    string
				vars map[string]any
			}{{createEndpoint, endpointInput(3, types...)}, {update, map[string]any{"id": int(ep.ID), "types": types}}} {
				res := w.query(t, w.dashA, op.q, op.vars)
				if res.code() != "BAD_REQUEST" || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, want) {
					t.Errorf("%.22s with %d event types: %d, %d errors, %.200v; want one BAD_REQUEST saying %q", op.q, n, res.Status, len(res.Errors), res.Errors, want)
					continue
				}
				if field, _ := res.Errors[0].Extensions["field"].(string); field != "eventTypes" {
					t.Errorf("%.22s with %d event types: field %q; want eventTypes", op.q, n, field)
				}
			}
		}
	})
}

// TestWebhookDeliveriesPerPage: webhookDeliveries takes perPage 1 to 100
// only, as its schema says: -1 (every record, which other pages accept),
// 0 and 101 are a BAD_REQUEST naming perPage.
func TestWebhookDeliveriesPerPage(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		w.withEvents(t, events.NewHub(nil))
		const q = `query($pp: Int) { webhookDeliveries(perPage: $pp) { data { id } pagination { perPage } } }`
		for _, pp := range []int{-1, 0, 101, -2} {
			res := w.query(t, w.dashA, q, map[string]any{"pp": pp})
			if res.code() != "BAD_REQUEST" {
				t.Errorf("perPage %d: %d %+v; want BAD_REQUEST", pp, res.Status, res.Errors)
				continue
			}
			if field, _ := res.Errors[0].Extensions["field"].(string); field != "perPage" || !strings.Contains(res.Errors[0].Message, "between 1 and 100") {
				t.Errorf("perPage %d: field %q, %q; want perPage and the bounds", pp, field, res.Errors[0].Message)
			}
		}
		for _, pp := range []int{1, 100} {
			var r struct {
				WebhookDeliveries struct{ Pagination struct{ PerPage int } }
			}
			w.ok(t, w.dashA, q, map[string]any{"pp": pp}, &r)
			if r.WebhookDeliveries.Pagination.PerPage != pp {
				t.Errorf("perPage %d answered %d", pp, r.WebhookDeliveries.Pagination.PerPage)
			}
		}
	})
}
