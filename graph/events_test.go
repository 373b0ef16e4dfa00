package graph_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/webhook"
)

// withEvents points w's handler at a resolver whose events go to a
// webhook queue (never started: the test dispatches, and the deliveries
// stay PENDING) and to hub, and returns a dashboard token of owner B and
// the queue.
func (w *world) withEvents(t *testing.T, hub *events.Hub) (dashB string, q *webhook.Queue) {
	t.Helper()
	q, err := webhook.NewQueue(w.c, database.Pool(w.c), database.Dialect(w.c), webhook.Config{})
	if err != nil {
		t.Fatal(err)
	}
	res := graph.NewResolver(w.c, graph.WithFiles(w.files), graph.WithShareBase(shareBase),
		graph.WithEvents(app.Events{Queue: q, Notify: events.Local{Hub: hub}}), graph.WithHub(hub))
	w.h = endpoint.NewHandler(res, w.tokens, endpoint.HandlerOptions{})
	dashB, _ = dbtest.Dashboard(t, w.tokens, w.b.ID)
	return dashB, q
}

// TestWebhookEndpoints: dashboard tokens manage their owner's endpoints;
// an Open API token is refused, bad input is a BAD_REQUEST naming the
// field (SSRF refusals among them), and another owner's endpoints and
// deliveries are neither listed nor changed.
func TestWebhookEndpoints(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		dashB, _ := w.withEvents(t, events.NewHub(nil))
		const create = `mutation($in: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $in) { endpoint { id url eventTypes enabled description createdAt } secret } }`
		in := func(url string, types ...string) map[string]any {
			return map[string]any{"in": map[string]any{"url": url, "eventTypes": types}}
		}
		for _, tc := range []struct {
			token, url string
			types      []string
			code       string
			field      string
		}{
			{w.tokA, "https://93.184.216.34/hook", nil, "FORBIDDEN", ""},
			{w.dashA, "https://127.0.0.1/hook", nil, "BAD_REQUEST", "url"},
			{w.dashA, "https://10.0.0.8/hook", nil, "BAD_REQUEST", "url"},
			{w.dashA, "https://169.254.169.254/latest/meta-data/", nil, "BAD_REQUEST", "url"},
			{w.dashA, "https://[::1]/hook", nil, "BAD_REQUEST", "url"},
			{w.dashA, "https://localhost/hook", nil, "BAD_REQUEST", "url"},
			{w.dashA, "http://93.184.216.34/hook", nil, "BAD_REQUEST", "url"},
			{w.dashA, "not a url", nil, "BAD_REQUEST", "url"},
			{w.dashA, "https://93.184.216.34/hook", []string{"order.created", "order.shipped"}, "BAD_REQUEST", "eventTypes[1]"},
		} {
			res := w.query(t, tc.token, create, in(tc.url, tc.types...))
			if res.code() != tc.code || res.Status >= 500 {
				t.Errorf("create %s %v: %d %+v; want %s", tc.url, tc.types, res.Status, res.Errors, tc.code)
				continue
			}
			if field, _ := res.Errors[0].Extensions["field"].(string); field != tc.field {
				t.Errorf("create %s %v: field %q; want %q", tc.url, tc.types, field, tc.field)
			}
		}
		if res := w.query(t, w.tokA, `{ webhookEndpoints { id } }`, nil); res.code() != "FORBIDDEN" {
			t.Errorf("webhookEndpoints with an Open API token: %+v; want FORBIDDEN", res.Errors)
		}

		type endpointJSON struct {
			ID          gid
			URL         string
			EventTypes  []string
			Enabled     bool
			Description string
		}
		var made struct {
			CreateWebhookEndpoint struct {
				Endpoint endpointJSON
				Secret   string
			}
		}
		w.ok(t, w.dashA, create, in("https://93.184.216.34/hook", "order.created"), &made)
		ep, secret := made.CreateWebhookEndpoint.Endpoint, made.CreateWebhookEndpoint.Secret
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) < 24 {
			t.Errorf("secret %q; want whsec_ and base64 of at least 24 bytes", secret)
		}
		if !ep.Enabled || len(ep.EventTypes) != 1 || ep.URL != "https://93.184.216.34/hook" {
			t.Errorf("endpoint %+v", ep)
		}
		list := func(token string) []endpointJSON {
			var r struct{ WebhookEndpoints []endpointJSON }
			w.ok(t, token, `{ webhookEndpoints { id url eventTypes enabled description } }`, nil, &r)
			return r.WebhookEndpoints
		}
		if got := list(w.dashA); len(got) != 1 || got[0].ID != ep.ID {
			t.Errorf("A's endpoints %+v; want the one made", got)
		}
		if got := list(dashB); len(got) != 0 {
			t.Errorf("B sees A's endpoints: %+v", got)
		}
		id := map[string]any{"id": int(ep.ID)}
		const update = `mutation($id: ID!, $in: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(id: $id, input: $in) { eventTypes enabled description } }`
		upd := map[string]any{"id": int(ep.ID), "in": map[string]any{"eventTypes": []string{}, "enabled": false, "description": "ERP"}}
		for _, tc := range []struct{ token, q, code string }{
			{dashB, update, "NOT_FOUND"},
			{dashB, `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }`, "NOT_FOUND"},
			{dashB, `mutation($id: ID!) { rotateWebhookSecret(id: $id) { secret } }`, "NOT_FOUND"},
			{w.tokA, `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }`, "FORBIDDEN"},
		} {
			vars := id
			if tc.q == update {
				vars = upd
			}
			if res := w.query(t, tc.token, tc.q, vars); res.code() != tc.code {
				t.Errorf("%s by another owner or an Open API token: %+v; want %s", tc.q, res.Errors, tc.code)
			}
		}
		var u struct{ UpdateWebhookEndpoint endpointJSON }
		w.ok(t, w.dashA, update, upd, &u)
		if got := u.UpdateWebhookEndpoint; got.Enabled || len(got.EventTypes) != 0 || got.Description != "ERP" {
			t.Errorf("updated endpoint %+v; want disabled, every type, described", got)
		}
		var rot struct{ RotateWebhookSecret struct{ Secret string } }
		w.ok(t, w.dashA, `mutation($id: ID!) { rotateWebhookSecret(id: $id) { secret } }`, id, &rot)
		if s := rot.RotateWebhookSecret.Secret; s == secret || !strings.HasPrefix(s, "whsec_") {
			t.Errorf("rotated secret %q; want a new one", s)
		}
		var del struct{ DeleteWebhookEndpoint gid }
		w.ok(t, w.dashA, `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }`, id, &del)
		if del.DeleteWebhookEndpoint != ep.ID || len(list(w.dashA)) != 0 {
			t.Errorf("after delete: %v, %+v", del.DeleteWebhookEndpoint, list(w.dashA))
		}
	})
}

// TestWebhookDeliveries: a write makes one delivery per endpoint that
// wants its type, listed to its owner only; a pending delivery cannot be
// redelivered.
func TestWebhookDeliveries(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		dashB, queue := w.withEvents(t, events.NewHub(nil))
		const create = `mutation($in: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $in) { endpoint { id } } }`
		w.ok(t, w.dashA, create, map[string]any{"in": map[string]any{"url": "https://93.184.216.34/orders", "eventTypes": []string{"order.updated"}}}, &struct{}{})
		w.ok(t, w.dashA, create, map[string]any{"in": map[string]any{"url": "https://93.184.216.34/all"}}, &struct{}{})
		w.ok(t, dashB, create, map[string]any{"in": map[string]any{"url": "https://93.184.216.34/b"}}, &struct{}{})
		ctx := dbtest.Sys
		mine := c.Order.Query().Where(order.OwnerID(w.a.ID)).FirstIDX(ctx)
		w.ok(t, w.dashA, `mutation($id: ID!) { updateOrder(id: $id, input: {status: "paid"}) { id } }`, map[string]any{"id": mine}, &struct{}{})
		w.ok(t, w.dashA, `mutation { createMaterial(input: {name: "Teak"}) { id } }`, nil, &struct{}{})
		if n, err := queue.Dispatch(context.Background()); err != nil || n != 2 {
			t.Fatalf("dispatch: %d events, %v; want the 2 writes'", n, err)
		}
		if n, err := queue.Dispatch(context.Background()); err != nil || n != 0 {
			t.Errorf("a second dispatch: %d events, %v; want none left", n, err)
		}

		type page struct {
			WebhookDeliveries struct {
				Data []struct {
					ID        gid
					EventType string
					Status    string
					Attempts  int
				}
				Pagination struct{ Total int }
			}
		}
		const q = `query($s: WebhookDeliveryStatus) { webhookDeliveries(status: $s, perPage: 10) { data { id eventID eventType status attempts lastStatusCode lastError nextAttemptAt createdAt deliveredAt } pagination { total } } }`
		var a, b page
		w.ok(t, w.dashA, q, nil, &a)
		types := map[string]int{}
		for _, d := range a.WebhookDeliveries.Data {
			types[d.EventType]++
			if d.Status != "PENDING" || d.Attempts != 0 {
				t.Errorf("delivery %+v; want PENDING, no attempt", d)
			}
		}
		if a.WebhookDeliveries.Pagination.Total != 3 || types["order.updated"] != 2 || types["material.created"] != 1 {
			t.Errorf("A's deliveries %+v; want order.updated to both endpoints, material.created to the one of every type", a.WebhookDeliveries)
		}
		w.ok(t, dashB, q, nil, &b)
		if len(b.WebhookDeliveries.Data) != 0 {
			t.Errorf("B sees %d deliveries; want none of A's", len(b.WebhookDeliveries.Data))
		}
		w.ok(t, w.dashA, q, map[string]any{"s": "SUCCEEDED"}, &a)
		if len(a.WebhookDeliveries.Data) != 0 {
			t.Errorf("status SUCCEEDED lists %d", len(a.WebhookDeliveries.Data))
		}
		if res := w.query(t, dashB, `mutation($id: ID!) { redeliverWebhook(deliveryID: $id) { id } }`, map[string]any{"id": 1}); res.code() != "NOT_FOUND" {
			t.Errorf("B redelivering A's delivery: %+v; want NOT_FOUND", res.Errors)
		}
		w.ok(t, w.dashA, q, nil, &a)
		pending := int(a.WebhookDeliveries.Data[0].ID)
		if res := w.query(t, w.dashA, `mutation($id: ID!) { redeliverWebhook(deliveryID: $id) { id } }`, map[string]any{"id": pending}); res.code() != "CONFLICT" {
			t.Errorf("redelivering a pending delivery: %+v; want CONFLICT", res.Errors)
		}
		if res := w.query(t, w.tokA, q, nil); res.code() != "FORBIDDEN" {
			t.Errorf("webhookDeliveries with an Open API token: %+v; want FORBIDDEN", res.Errors)
		}
	})
}

// wsClient speaks graphql-transport-ws. A goroutine reads the
// connection (a read that times out would close it), so that read can
// wait for a message without ending the connection.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
	msgs chan []byte
	// err is why the connection ended, set before msgs is closed.
	err error
}

func dialWS(t *testing.T, url, token string) *wsClient {
	t.Helper()
	c := dialRaw(t, url)
	c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}})
	if m := c.read(5 * time.Second); m["type"] != "connection_ack" {
		t.Fatalf("connection_init: %v; want connection_ack", m)
	}
	return c
}

// dialRaw opens a graphql-transport-ws connection without sending
// anything.
func dialRaw(t *testing.T, url string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1)+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	c := &wsClient{t: t, conn: conn, msgs: make(chan []byte, 64)}
	go func() {
		defer close(c.msgs)
		for {
			_, b, err := conn.Read(context.Background())
			if err != nil {
				c.err = err
				return
			}
			c.msgs <- b
		}
	}()
	return c
}

func (c *wsClient) send(m map[string]any) {
	c.t.Helper()
	b, _ := json.Marshal(m)
	if err := c.conn.Write(context.Background(), websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next message other than a ping or pong, or nil after
// d or when the connection has ended.
func (c *wsClient) read(d time.Duration) map[string]any {
	timeout := time.After(d)
	for {
		select {
		case b, ok := <-c.msgs:
			if !ok {
				return nil
			}
			var m map[string]any
			json.Unmarshal(b, &m)
			if m["type"] != "ping" && m["type"] != "pong" {
				return m
			}
		case <-timeout:
			return nil
		}
	}
}

// TestSubscriptionOverWebSocket: a subscription over graphql-transport-ws,
// authenticated in connection_init, receives its owner's changes of the
// types it asked for, with the record as its token reads it; another
// owner's subscriber receives nothing; an unknown type is refused.
func TestSubscriptionOverWebSocket(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		hub := events.NewHub(nil)
		_, _ = w.withEvents(t, hub)
		srv := httptest.NewServer(w.h)
		defer srv.Close()
		a, b := dialWS(t, srv.URL, w.tokA), dialWS(t, srv.URL, w.tokB)
		const sub = `subscription { events(types: ["order.updated", "material.deleted"]) { id type timestamp order { id status } material { id } deletedID } }`
		a.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": sub}})
		b.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": sub}})
		deadline := time.Now().Add(5 * time.Second)
		for hub.Len() < 2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		ctx := dbtest.Sys
		mine := c.Order.Query().Where(order.OwnerID(w.a.ID)).FirstIDX(ctx)
		w.ok(t, w.dashA, `mutation { createMaterial(input: {name: "Teak"}) { id } }`, nil, &struct{}{}) // a type not asked for
		w.ok(t, w.dashA, `mutation($id: ID!) { updateOrder(id: $id, input: {status: "shipped"}) { id } }`, map[string]any{"id": mine}, &struct{}{})
		m := a.read(5 * time.Second)
		var next struct {
			ID      string
			Type    string
			Payload struct {
				Data struct {
					Events struct {
						Type      string
						Timestamp time.Time
						Order     *struct {
							ID     gid
							Status string
						}
						DeletedID *gid
					}
				}
			}
		}
		raw, _ := json.Marshal(m)
		json.Unmarshal(raw, &next)
		e := next.Payload.Data.Events
		if next.Type != "next" || e.Type != "order.updated" || e.Order == nil || int(e.Order.ID) != mine || e.Order.Status != "shipped" || e.DeletedID != nil {
			t.Fatalf("A received %s; want order.updated of order %d, shipped", raw, mine)
		}
		if time.Since(e.Timestamp) > time.Minute {
			t.Errorf("timestamp %v is not now", e.Timestamp)
		}
		if m := b.read(300 * time.Millisecond); m != nil {
			t.Errorf("B received %v; want nothing of A's", m)
		}
		a.send(map[string]any{"id": "2", "type": "subscribe", "payload": map[string]any{"query": `subscription { events(types: ["order.shipped"]) { id } }`}})
		var refused struct {
			Type    string
			Payload struct {
				Errors []gqlError
			}
		}
		json.Unmarshal(mustJSON(a.read(5*time.Second)), &refused)
		if errs := refused.Payload.Errors; refused.Type != "next" || len(errs) != 1 || errs[0].Extensions["code"] != "BAD_REQUEST" || errs[0].Extensions["field"] != "types" {
			t.Errorf("an unknown event type: %+v; want BAD_REQUEST of types", refused)
		}
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestSubscriptionBudget: each subscription started over a socket is
// charged to its token like a query (a budget of 3 units a minute lets
// three start and refuses the fourth), and a subscription is held to the
// same complexity limit.
func TestSubscriptionBudget(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		hub := events.NewHub(nil)
		res := graph.NewResolver(c, graph.WithEvents(app.Events{Notify: events.Local{Hub: hub}}), graph.WithHub(hub))
		srv := httptest.NewServer(endpoint.NewHandler(res, w.tokens, endpoint.HandlerOptions{Limiter: ratelimit.NewMemory(3)}))
		defer srv.Close()
		ws := dialWS(t, srv.URL, w.tokA)
		for i := 1; i <= 4; i++ {
			ws.send(map[string]any{"id": strconv.Itoa(i), "type": "subscribe", "payload": map[string]any{"query": `subscription { events { id } }`}})
		}
		var refused struct {
			ID      string
			Type    string
			Payload []gqlError
		}
		json.Unmarshal(mustJSON(ws.read(5*time.Second)), &refused)
		if errs := refused.Payload; refused.ID != "4" || refused.Type != "error" || len(errs) != 1 || errs[0].Extensions["code"] != "RATE_LIMITED" {
			t.Errorf("the fourth subscription: %+v; want an error RATE_LIMITED", refused)
		}
		costly := "subscription { events { order { configurator { orders { edges { node { configurator { orders { edges { node { configurator { orders { edges { node { id } } } } } } } } } } } } } } }"
		ws2 := dialWS(t, srv.URL, w.dashA)
		ws2.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": costly}})
		refused.Payload = nil
		json.Unmarshal(mustJSON(ws2.read(5*time.Second)), &refused)
		if errs := refused.Payload; len(errs) == 0 || errs[0].Extensions["code"] != "QUERY_TOO_COMPLEX" {
			t.Errorf("a subscription over the complexity limit: %+v; want QUERY_TOO_COMPLEX", refused)
		}
	})
}
