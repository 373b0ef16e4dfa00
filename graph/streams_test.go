package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/pglisten"
)

// streamServer serves w's graph with a hub and the given stream caps.
func streamServer(t *testing.T, w *world, limits endpoint.StreamLimits) (*httptest.Server, *events.Hub) {
	t.Helper()
	hub := events.NewHub(nil)
	res := graph.NewResolver(w.c, graph.WithEvents(app.Events{Notify: events.Local{Hub: hub}}), graph.WithHub(hub))
	srv := httptest.NewServer(endpoint.NewHandler(res, w.tokens, endpoint.HandlerOptions{Streams: limits}))
	t.Cleanup(srv.Close)
	return srv, hub
}

// closed waits up to d for the server to close the connection and
// returns its close code and reason (-1 when it did not close).
func (c *wsClient) closed(d time.Duration) (websocket.StatusCode, string) {
	timeout := time.After(d)
	for {
		select {
		case _, ok := <-c.msgs:
			if ok {
				continue
			}
			var ce websocket.CloseError
			if errors.As(c.err, &ce) {
				return ce.Code, ce.Reason
			}
			return -1, c.err.Error()
		case <-timeout:
			return -1, "still open"
		}
	}
}

// sub sends a subscribe message.
func (c *wsClient) sub(id, query string, vars map[string]any) {
	c.t.Helper()
	c.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
}

// wsReply is a message of the server.
type wsReply struct {
	ID      string
	Type    string
	Payload json.RawMessage
}

// errorsOf returns the errors of an error message (an array) or of a
// next message (a result).
func (m wsReply) errorsOf() []gqlError {
	var list []gqlError
	if json.Unmarshal(m.Payload, &list) == nil {
		return list
	}
	var res struct{ Errors []gqlError }
	json.Unmarshal(m.Payload, &res)
	return res.Errors
}

func (c *wsClient) reply(d time.Duration) wsReply {
	var r wsReply
	if m := c.read(d); m != nil {
		json.Unmarshal(mustJSON(m), &r)
	}
	return r
}

// waitFor polls cond until it holds or 5 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const subEvents = `subscription { events { id type } }`

// TestSubscriptionProtocol: graphql-transport-ws to the letter: a
// refused connection_init (garbage, forged, revoked, alg none) closes
// 4403; a duplicate id 4409; a malformed message 4400; a subscribe
// before connection_init 4401; a second connection_init 4429; and after
// the client completes an id, that stream stops while the id may be
// used again.
func TestSubscriptionProtocol(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		srv, hub := streamServer(t, w, endpoint.StreamLimits{})
		revoked, rec := dbtest.OpenAPI(t, w.tokens, w.a1.ID)
		if err := w.tokens.Revoke(context.Background(), rec.ID); err != nil {
			t.Fatal(err)
		}
		forged, _ := auth.NewSigner([]byte("another key, another key, 32 bytes")).Mint(w.recA.ID, "open_api", time.Now(), time.Time{})
		none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": auth.Issuer, "sub": strconv.Itoa(w.recA.ID), "kind": "open_api"}).
			SignedString(jwt.UnsafeAllowNoneSignatureType)
		for name, tok := range map[string]string{"garbage": "garbage", "forged": forged, "revoked": revoked, "alg none": none} {
			ws := dialRaw(t, srv.URL)
			ws.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + tok}})
			if code, reason := ws.closed(5 * time.Second); code != 4403 {
				t.Errorf("connection_init with a %s token: closed %d %q; want 4403", name, code, reason)
			}
		}

		for name, tc := range map[string]struct {
			msgs []string
			code websocket.StatusCode
		}{
			"not JSON":                     {[]string{`{"type":"connection_init"}`, `nope`}, 4400},
			"unknown type":                 {[]string{`{"type":"connection_init"}`, `{"type":"start","id":"1"}`}, 4400},
			"type not a string":            {[]string{`{"type":"connection_init"}`, `{"type":5}`}, 4400},
			"subscribe without id":         {[]string{`{"type":"connection_init"}`, `{"type":"subscribe","payload":{"query":"{ viewer { kind } }"}}`}, 4400},
			"subscribe without a query":    {[]string{`{"type":"connection_init"}`, `{"type":"subscribe","id":"1","payload":{}}`}, 4400},
			"subscribe with a bad payload": {[]string{`{"type":"connection_init"}`, `{"type":"subscribe","id":"1","payload":"{ viewer { kind } }"}`}, 4400},
			"init payload not an object":   {[]string{`{"type":"connection_init","payload":"x"}`}, 4400},
			"subscribe before init":        {[]string{`{"type":"subscribe","id":"1","payload":{"query":"{ viewer { kind } }"}}`}, 4401},
			"second init":                  {[]string{`{"type":"connection_init"}`, `{"type":"connection_init"}`}, 4429},
		} {
			ws := dialRaw(t, srv.URL)
			for _, m := range tc.msgs {
				ws.conn.Write(context.Background(), websocket.MessageText, []byte(m))
			}
			if code, reason := ws.closed(5 * time.Second); code != tc.code {
				t.Errorf("%s: closed %d %q; want %d", name, code, reason, tc.code)
			}
		}

		ws := dialWS(t, srv.URL, w.tokA)
		ws.sub("1", subEvents, nil)
		waitFor(t, "the subscriber", func() bool { return hub.Len() == 1 })
		ws.sub("1", subEvents, nil)
		if code, reason := ws.closed(5 * time.Second); code != 4409 || reason != "Subscriber for 1 already exists" {
			t.Errorf("a duplicate id: closed %d %q; want 4409 Subscriber for 1 already exists", code, reason)
		}
		waitFor(t, "the subscribers to end with their socket", func() bool { return hub.Len() == 0 })

		ws = dialWS(t, srv.URL, w.tokA)
		ws.sub("1", subEvents, nil)
		waitFor(t, "the subscriber", func() bool { return hub.Len() == 1 })
		ws.send(map[string]any{"id": "1", "type": "complete"})
		waitFor(t, "the completed subscriber to end", func() bool { return hub.Len() == 0 })
		hub.Publish(events.Event{ID: 1, Type: events.OrderCreated, OwnerID: w.a.ID, ResourceID: 1})
		if m := ws.reply(300 * time.Millisecond); m.Type != "" {
			t.Errorf("after complete: received %+v; want nothing", m)
		}
		ws.sub("1", subEvents, nil)
		waitFor(t, "the id used again", func() bool { return hub.Len() == 1 })
		hub.Publish(events.Event{ID: 2, Type: events.OrderCreated, OwnerID: w.a.ID, ResourceID: 1})
		if m := ws.reply(5 * time.Second); m.Type != "next" || m.ID != "1" || !bytes.Contains(m.Payload, []byte(`order.created`)) {
			t.Errorf("the id used again after complete: %+v %s; want next of order.created", m, m.Payload)
		}
		ws.send(map[string]any{"type": "ping", "payload": map[string]any{"n": 1}})
		select {
		case b := <-ws.msgs:
			if string(b) != `{"type":"pong","payload":{"n":1}}` {
				t.Errorf("ping: %s; want a pong with its payload", b)
			}
		case <-time.After(5 * time.Second):
			t.Error("ping: no pong")
		}
	})
}

// TestSubscriptionValidation: a subscription with more than one root
// field is a validation error (the specification's "Single root field"
// rule, aliases of one field included), over HTTP and as the error
// message of graphql-transport-ws; events(types:) takes at most one entry
// per known type, folds duplicates, and refuses unknown types in one
// short error that names each once.
func TestSubscriptionValidation(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		srv, hub := streamServer(t, w, endpoint.StreamLimits{})
		for _, q := range []string{
			`subscription { a: events { id } b: events { id } }`,
			`subscription { events { id } ...F } fragment F on Subscription { again: events { id } }`,
			`subscription { events { id } __typename }`,
		} {
			body, _ := json.Marshal(map[string]any{"query": q})
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+w.tokA)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var r gqlResponse
			json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
			if r.code() != "GRAPHQL_VALIDATION_FAILED" || !strings.Contains(r.Errors[len(r.Errors)-1].Message, "only one top level field") {
				t.Errorf("%s: %d %+v; want GRAPHQL_VALIDATION_FAILED, only one top level field", q, resp.StatusCode, r.Errors)
			}
		}
		ws := dialWS(t, srv.URL, w.tokA)
		ws.sub("1", `subscription { a: events { id } b: events { id } }`, nil)
		if m := ws.reply(5 * time.Second); m.Type != "error" || len(m.errorsOf()) != 1 || m.errorsOf()[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
			t.Errorf("two root fields over a socket: %+v %s; want an error message GRAPHQL_VALIDATION_FAILED", m, m.Payload)
		}

		const sub = `subscription($types: [String!]) { events(types: $types) { id type } }`
		many := make([]any, 2000)
		for i := range many {
			many[i] = "order.created"
		}
		ws.sub("2", sub, map[string]any{"types": many})
		m := ws.reply(5 * time.Second)
		errs := m.errorsOf()
		if len(errs) != 1 || errs[0].Extensions["code"] != "BAD_REQUEST" || errs[0].Extensions["field"] != "types" ||
			!strings.Contains(errs[0].Message, "at most "+strconv.Itoa(len(events.Types))) || len(m.Payload) > 1000 {
			t.Errorf("2,000 types: %+v %.500s; want one BAD_REQUEST of types, at most %d", m, m.Payload, len(events.Types))
		}
		if m := ws.reply(5 * time.Second); m.Type != "complete" || m.ID != "2" {
			t.Errorf("after the refusal: %+v; want complete", m)
		}
		ws.sub("3", sub, map[string]any{"types": []string{"order.shipped", "x", "order.shipped", "order.created", strings.Repeat("y", 5000)}})
		m = ws.reply(5 * time.Second)
		errs = m.errorsOf()
		if len(errs) != 1 || errs[0].Extensions["field"] != "types" || strings.Count(errs[0].Message, `"order.shipped"`) != 1 ||
			!strings.Contains(errs[0].Message, `"x"`) || strings.Contains(errs[0].Message, `"order.created"`) || len(errs[0].Message) > 600 {
			t.Errorf("unknown types: %+v; want one error of types naming order.shipped and x once, clipped", errs)
		}
		if m := ws.reply(5 * time.Second); m.Type != "complete" || m.ID != "3" {
			t.Errorf("after the refusal: %+v; want complete", m)
		}
		ws.sub("4", sub, map[string]any{"types": []string{"order.created", "order.created", "material.deleted"}})
		waitFor(t, "the subscriber with duplicates", func() bool { return hub.Len() == 1 })
		hub.Publish(events.Event{ID: 1, Type: events.OrderCreated, OwnerID: w.a.ID, ResourceID: 1})
		if m := ws.reply(5 * time.Second); m.Type != "next" || m.ID != "4" || !bytes.Contains(m.Payload, []byte(`order.created`)) {
			t.Errorf("types with a duplicate: %+v %s; want next of order.created", m, m.Payload)
		}
		if m := ws.reply(200 * time.Millisecond); m.Type != "" {
			t.Errorf("one event, twice? %+v %s", m, m.Payload)
		}
	})
}

// sseStream is a subscription over Server-Sent Events.
type sseStream struct {
	events chan sseEvent
	resp   *http.Response
}

type sseEvent struct{ event, data string }

// openSSE posts a subscription with Accept: text/event-stream.
func openSSE(t *testing.T, url, token, query string) *sseStream {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	s := &sseStream{events: make(chan sseEvent, 16), resp: resp}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if e != (sseEvent{}) {
					s.events <- e
				}
				e = sseEvent{}
			case strings.HasPrefix(line, "event:"):
				e.event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				e.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
	}()
	return s
}

// next returns the next event, or a zero one after d or at the end.
func (s *sseStream) next(d time.Duration) (sseEvent, bool) {
	select {
	case e, ok := <-s.events:
		return e, ok
	case <-time.After(d):
		return sseEvent{}, true
	}
}

// TestRevokedTokenEndsStreams: revoking a token ends its open streams
// within 5 s: its WebSocket closes 4403, its SSE stream sends a last
// event with an UNAUTHENTICATED error and completes; another token's
// stream goes on. The revocation is made by another token service, as
// another replica or `server token revoke` would make it: the serving
// one hears it from PostgreSQL's notification, or on SQLite rereads the
// tokens of its streams.
func TestRevokedTokenEndsStreams(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			dbURL := b.URL(t)
			c := dbtest.Open(t, dbURL)
			w := newWorld(t, c)
			lis, err := pglisten.New(dbURL, slog.Default())
			if err != nil {
				t.Fatal(err)
			}
			w.tokens.Listen(lis, slog.Default())
			t.Cleanup(lis.Start(context.Background()))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); w.tokens.Run(ctx, nil) }()
			t.Cleanup(func() { cancel(); <-done })
			srv, hub := streamServer(t, w, endpoint.StreamLimits{})
			tok, rec := dbtest.OpenAPI(t, w.tokens, w.a1.ID)
			ws := dialWS(t, srv.URL, tok)
			ws.sub("1", subEvents, nil)
			other := dialWS(t, srv.URL, w.tokA)
			other.sub("1", subEvents, nil)
			sse := openSSE(t, srv.URL, tok, subEvents)
			waitFor(t, "three subscribers", func() bool { return hub.Len() == 3 })
			waitFor(t, "the listener", func() bool { return b.Name != "postgres" || w.tokens.Listening() })

			replica := dbtest.Tokens(dbtest.Open(t, dbURL))
			start := time.Now()
			if err := replica.Revoke(context.Background(), rec.ID); err != nil {
				t.Fatal(err)
			}
			code, reason := ws.closed(5 * time.Second)
			if code != 4403 || reason != "Forbidden: token revoked" {
				t.Errorf("the revoked token's socket: closed %d %q; want 4403 Forbidden: token revoked", code, reason)
			}
			t.Logf("socket closed %v after the revocation", time.Since(start).Round(time.Millisecond))
			var last []sseEvent
			for {
				e, ok := sse.next(time.Until(start.Add(5 * time.Second)))
				if !ok || e == (sseEvent{}) {
					break
				}
				last = append(last, e)
			}
			if n := len(last); n < 2 || last[n-1].event != "complete" || !strings.Contains(last[n-2].data, `"code":"UNAUTHENTICATED"`) ||
				!strings.Contains(last[n-2].data, "token revoked") {
				t.Errorf("the revoked token's SSE stream: %+v; want an UNAUTHENTICATED error, then complete, within 5 s", last)
			}
			t.Logf("SSE stream ended %v after the revocation", time.Since(start).Round(time.Millisecond))
			waitFor(t, "the revoked token's subscribers to end", func() bool { return hub.Len() == 1 })
			hub.Publish(events.Event{ID: 1, Type: events.OrderCreated, OwnerID: w.a.ID, ResourceID: 1})
			if m := other.reply(5 * time.Second); m.Type != "next" {
				t.Errorf("another token's stream: %+v; want it to go on", m)
			}
		})
	}
}

// TestStreamCaps: a socket holds at most PerConnection operations, a
// token at most PerCaller streams on the server (sockets and SSE
// together); a refusal is SUBSCRIPTION_LIMIT naming the cap, and a slot
// ended is free again.
func TestStreamCaps(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		srv, hub := streamServer(t, w, endpoint.StreamLimits{PerConnection: 2, PerCaller: 3})
		a := dialWS(t, srv.URL, w.tokA)
		a.sub("1", subEvents, nil)
		a.sub("2", subEvents, nil)
		a.sub("3", subEvents, nil)
		m := a.reply(5 * time.Second)
		if errs := m.errorsOf(); m.Type != "error" || m.ID != "3" || len(errs) != 1 || errs[0].Extensions["code"] != "SUBSCRIPTION_LIMIT" ||
			!strings.Contains(errs[0].Message, "SUBSCRIPTIONS_PER_CONNECTION") {
			t.Errorf("a third subscription on a socket of 2: %+v %s; want an error SUBSCRIPTION_LIMIT naming SUBSCRIPTIONS_PER_CONNECTION", m, m.Payload)
		}
		waitFor(t, "two subscribers", func() bool { return hub.Len() == 2 })
		b := dialWS(t, srv.URL, w.tokA)
		b.sub("1", subEvents, nil)
		waitFor(t, "three subscribers", func() bool { return hub.Len() == 3 })
		b.sub("2", subEvents, nil)
		m = b.reply(5 * time.Second)
		if errs := m.errorsOf(); m.Type != "error" || m.ID != "2" || len(errs) != 1 || errs[0].Extensions["code"] != "SUBSCRIPTION_LIMIT" ||
			!strings.Contains(errs[0].Message, "STREAMS_PER_TOKEN") {
			t.Errorf("a fourth stream of a token capped at 3: %+v %s; want an error SUBSCRIPTION_LIMIT naming STREAMS_PER_TOKEN", m, m.Payload)
		}
		sse := openSSE(t, srv.URL, w.tokA, subEvents)
		if e, _ := sse.next(5 * time.Second); !strings.Contains(e.data, "SUBSCRIPTION_LIMIT") {
			t.Errorf("an SSE stream over the token's cap: %+v; want SUBSCRIPTION_LIMIT", e)
		}
		// Another token has its own streams.
		other := dialWS(t, srv.URL, w.tokB)
		other.sub("1", subEvents, nil)
		waitFor(t, "another token's subscriber", func() bool { return hub.Len() == 4 })
		// A slot ended is free again.
		a.send(map[string]any{"id": "1", "type": "complete"})
		waitFor(t, "the completed subscriber to end", func() bool { return hub.Len() == 3 })
		b.sub("3", subEvents, nil)
		waitFor(t, "a new subscriber in the freed slot", func() bool { return hub.Len() == 4 })
	})
}
