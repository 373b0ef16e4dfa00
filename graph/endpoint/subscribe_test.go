package endpoint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/events"
)

// holdOperation holds the connection's reader (the goroutine that serves
// a graphql-transport-ws connection creates each operation it is sent)
// while it creates the operation named name, until release is closed:
// the connection cannot act on its token's end meanwhile, while its
// running operations can.
type holdOperation struct {
	name    string
	reached chan struct{}
	release chan struct{}
}

func (*holdOperation) ExtensionName() string                   { return "HoldOperation" }
func (*holdOperation) Validate(graphql.ExecutableSchema) error { return nil }

func (h *holdOperation) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	if p.OperationName == h.name {
		close(h.reached)
		<-h.release
	}
	return nil
}

// operationGoroutines returns the ids of the goroutines that run a
// WebSocket operation (wsConn.run) now. The test waits on one to end: it
// is the only sign that the operation has sent its last message, or
// decided to send none.
func operationGoroutines() map[string]bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	ids := map[string]bool{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("graph/endpoint.(*wsConn).run(")) {
			head, _, _ := bytes.Cut(bytes.TrimPrefix(g, []byte("goroutine ")), []byte(" "))
			ids[string(head)] = true
		}
	}
	return ids
}

// waitUntil polls cond until it holds, failing the test at deadline.
func waitUntil(t *testing.T, deadline time.Time, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// wsMsg is a message of graphql-transport-ws.
type wsMsg struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// TestTokenEndClosesWithoutComplete: a subscription ended by its token's
// revocation or expiry sends no complete (nor next) before the
// connection closes with 4403, even when the operation ends before the
// connection acts: a client takes the first end it reads, and a complete
// would tell it the stream ended normally (Apollo's did, once in seven CI
// runs of the client matrix). The test forces that order every time: the
// connection's reader is held creating a second operation from before the
// token ends until the subscription's goroutine is gone.
func TestTokenEndClosesWithoutComplete(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ttl    time.Duration
		reason string
	}{
		{"revoked", 0, "Forbidden: token revoked"},
		// Whole seconds: the token expires 2 to 3 s after it is minted.
		{"expired", 3 * time.Second, "Forbidden: token expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Run(t, func(t *testing.T, c *ent.Client) {
				testTokenEnd(t, c, tc.ttl, tc.reason)
			})
		})
	}
}

func testTokenEnd(t *testing.T, c *ent.Client, ttl time.Duration, reason string) {
	tn := dbtest.NewTenant(t, c, "A", "Sofa")
	tokens := dbtest.Tokens(c)
	var opts []auth.CreateOption
	if ttl > 0 {
		opts = append(opts, auth.TTL(ttl))
	}
	tok, rec := dbtest.OpenAPI(t, tokens, tn.Confs[0].ID, opts...)
	hub := events.NewHub(nil)
	hold := &holdOperation{name: "Hold", reached: make(chan struct{}), release: make(chan struct{})}
	release := sync.OnceFunc(func() { close(hold.release) })
	t.Cleanup(release)
	h := endpoint.NewHandler(graph.NewResolver(c, graph.WithHub(hub)), tokens,
		endpoint.HandlerOptions{Extensions: []graphql.HandlerExtension{hold}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1)+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	send := func(m map[string]any) {
		t.Helper()
		b, _ := json.Marshal(m)
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	msgs := make(chan wsMsg, 16)
	var readErr error // set before msgs is closed
	go func() {
		defer close(msgs)
		for {
			_, b, err := conn.Read(context.Background())
			if err != nil {
				readErr = err
				return
			}
			var m wsMsg
			json.Unmarshal(b, &m)
			msgs <- m
		}
	}()
	next := func(what string) wsMsg {
		t.Helper()
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("%s: the connection ended: %v", what, readErr)
			}
			return m
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: nothing within 5 s", what)
		}
		return wsMsg{}
	}

	send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + tok}})
	if m := next("connection_init"); m.Type != "connection_ack" {
		t.Fatalf("connection_init: %+v; want connection_ack", m)
	}
	before := operationGoroutines()
	send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": `subscription { events { id type } }`}})
	waitUntil(t, time.Now().Add(5*time.Second), "the subscriber", func() bool { return hub.Len() == 1 })
	hub.Publish(events.Event{ID: 1, Type: events.OrderCreated, OwnerID: tn.ID, ResourceID: 1})
	if m := next("the subscription"); m.ID != "1" || m.Type != "next" || !bytes.Contains(m.Payload, []byte("order.created")) {
		t.Fatalf("the subscription: %+v %s; want next of order.created", m, m.Payload)
	}
	var op string
	waitUntil(t, time.Now().Add(5*time.Second), "the subscription's goroutine (wsConn.run)", func() bool {
		for id := range operationGoroutines() {
			if !before[id] {
				op = id
				return true
			}
		}
		return false
	})

	send(map[string]any{"id": "2", "type": "subscribe", "payload": map[string]any{"query": `query Hold { __typename }`, "operationName": "Hold"}})
	select {
	case <-hold.reached:
	case <-time.After(5 * time.Second):
		t.Fatal("the connection did not start creating operation 2")
	}
	if ttl > 0 && !time.Now().Before(*rec.ExpiresAt) {
		t.Fatalf("the token expired at %v, before the connection was held; the setup is too slow", rec.ExpiresAt)
	}
	deadline := time.Now().Add(5 * time.Second)
	if ttl > 0 {
		deadline = rec.ExpiresAt.Add(5 * time.Second)
	} else if err := tokens.Revoke(context.Background(), rec.ID); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, deadline, "the subscription to end with its token", func() bool { return !operationGoroutines()[op] })
	release()

	for open := true; open; {
		select {
		case m, ok := <-msgs:
			if open = ok; ok && m.ID == "1" {
				t.Errorf("after its token ended, operation 1 sent %s %s; want nothing before close 4403", m.Type, m.Payload)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the connection is open 5 s after its token ended")
		}
	}
	var ce websocket.CloseError
	if !errors.As(readErr, &ce) || ce.Code != 4403 || ce.Reason != reason {
		t.Errorf("the connection ended with %v; want close 4403 %q", readErr, reason)
	}
}
