package graph_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/pglisten"
)

// The tests of this file hold streams to their token at every moment
// (issue 40 item 7, issue 43 item 1). None runs Tokens.Run, so no timed
// recheck hides a missed revocation: what ends a stream is either a
// notification (PostgreSQL's listener) or the checks made by the stream
// itself.

// withdrawnWorld is a world on backend b whose token service hears
// PostgreSQL's revocations when listen is set (and b is PostgreSQL), and
// a server of its graph with a hub and the extensions ext.
type withdrawnWorld struct {
	*world
	dbURL string
	hub   *events.Hub
	srv   *httptest.Server
}

func newWithdrawnWorld(t *testing.T, b dbtest.Backend, listen bool, ext ...graphql.HandlerExtension) *withdrawnWorld {
	t.Helper()
	dbURL := b.URL(t)
	w := &withdrawnWorld{world: newWorld(t, dbtest.Open(t, dbURL)), dbURL: dbURL, hub: events.NewHub(nil)}
	if listen && b.Name == "postgres" {
		lis, err := pglisten.New(dbURL, slog.Default())
		if err != nil {
			t.Fatal(err)
		}
		w.tokens.Listen(lis, slog.Default())
		t.Cleanup(lis.Start(context.Background()))
		waitFor(t, "the listener", w.tokens.Listening)
	}
	res := graph.NewResolver(w.c, graph.WithEvents(app.Events{Notify: events.Local{Hub: w.hub}}), graph.WithHub(w.hub))
	w.srv = httptest.NewServer(endpoint.NewHandler(res, w.tokens, endpoint.HandlerOptions{Extensions: ext}))
	t.Cleanup(w.srv.Close)
	return w
}

// revokeElsewhere revokes token record id through another token service
// (another replica, or `server token revoke`), and returns once this
// server would refuse the token over HTTP: at once on SQLite and without
// a listener, once the notification is heard with one.
func (w *withdrawnWorld) revokeElsewhere(t *testing.T, id int, tok string) {
	t.Helper()
	if err := dbtest.Tokens(dbtest.Open(t, w.dbURL)).Revoke(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the revocation to be heard", func() bool {
		_, err := w.tokens.Resolve(context.Background(), tok)
		return errors.Is(err, auth.ErrRevoked)
	})
	if code := w.viewerStatus(t, tok); code != http.StatusUnauthorized {
		t.Fatalf("the revoked token over HTTP: %d; want 401", code)
	}
}

// viewerStatus is the status of a query of the viewer with tok.
func (w *withdrawnWorld) viewerStatus(t *testing.T, tok string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.srv.URL, strings.NewReader(`{"query":"{ viewer { ownerID } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// publish publishes an event of w's owner A.
func (w *withdrawnWorld) publish() {
	w.hub.Publish(events.Event{ID: 1, Type: events.OrderCreated, OwnerID: w.a.ID, ResourceID: 1})
}

// expectSocketEnd reads ws until it closes (5 s at most) and fails if
// any result (next) came before the close, or the close is not 4403.
func expectSocketEnd(t *testing.T, ws *wsClient, what string) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	sent := false
	for {
		select {
		case b, ok := <-ws.msgs:
			if !ok {
				var ce websocket.CloseError
				if !errors.As(ws.err, &ce) || ce.Code != 4403 {
					t.Errorf("%s: the socket ended with %v; want close 4403", what, ws.err)
				}
				return
			}
			if m := string(b); strings.Contains(m, `"next"`) && !sent {
				sent = true
				t.Errorf("%s: the socket sent %s; want no event, then close 4403", what, m)
			}
		case <-timeout:
			t.Errorf("%s: the socket is open after 5 s; want close 4403", what)
			return
		}
	}
}

// expectSSEEnd reads s until it ends (5 s at most) and fails if any
// event carried data before the last, an UNAUTHENTICATED error.
func expectSSEEnd(t *testing.T, s *sseStream, what string) {
	t.Helper()
	var got []sseEvent
	deadline := time.Now().Add(5 * time.Second)
	for {
		e, ok := s.next(time.Until(deadline))
		if !ok {
			break
		}
		if e == (sseEvent{}) {
			t.Errorf("%s: the SSE stream is open after 5 s (%d events, the first %+v); want an UNAUTHENTICATED error, then complete", what, len(got), got[:min(len(got), 1)])
			return
		}
		got = append(got, e)
	}
	for _, e := range got {
		if strings.Contains(e.data, `"data"`) && !strings.Contains(e.data, `"data":null`) {
			t.Errorf("%s: the SSE stream sent %s; want no event", what, e.data)
			break
		}
	}
	if n := len(got); n < 2 || got[n-1].event != "complete" || !strings.Contains(got[n-2].data, `"code":"UNAUTHENTICATED"`) {
		t.Errorf("%s: the SSE stream ended with %+v; want an UNAUTHENTICATED error, then complete", what, got)
	}
}

// feed publishes an event whenever the hub has a subscriber, until stop
// is closed, so that a stream that wrongly lives receives one.
func (w *withdrawnWorld) feed(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if w.hub.Len() > 0 {
					w.publish()
				}
			}
		}
	})
	t.Cleanup(func() { close(stop); wg.Wait() })
}

// TestRevokedBeforeRegistration: a token revoked after the stream's
// token was checked but before the stream registered with the
// revocations (Tokens.Watch) ends the stream, which sends nothing: a
// WebSocket authenticated at its upgrade and revoked before its
// connection_init, an SSE request revoked between its token check and
// its subscription (a hook in the operation's preparation). On
// PostgreSQL the revocation's notification has been heard (and found no
// stream) before the stream registers.
func TestRevokedBeforeRegistration(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name+"/websocket", func(t *testing.T) {
			w := newWithdrawnWorld(t, b, true)
			tok, rec := dbtest.OpenAPI(t, w.tokens, w.a1.ID)
			ws := dialUpgrade(t, w.srv.URL, tok)
			w.revokeElsewhere(t, rec.ID, tok)
			w.feed(t)
			ws.send(map[string]any{"type": "connection_init"})
			ws.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": subEvents}})
			expectSocketEnd(t, ws, "a socket revoked between its upgrade and its connection_init")
		})
		t.Run(b.Name+"/sse", func(t *testing.T) {
			var tok string
			var id int
			var w *withdrawnWorld
			var once sync.Once
			hook := &beforeOperation{do: func() { once.Do(func() { w.revokeElsewhere(t, id, tok) }) }}
			w = newWithdrawnWorld(t, b, true, hook)
			var rec *ent.APIToken
			tok, rec = dbtest.OpenAPI(t, w.tokens, w.a1.ID)
			id = rec.ID
			w.feed(t)
			expectSSEEnd(t, openSSE(t, w.srv.URL, tok, subEvents), "an SSE stream revoked between its token check and its subscription")
		})
	}
}

// TestStreamSendsNothingRevoked: once a revocation has committed, a
// stream sends no event: its token is checked at each event as HTTP
// checks it. The revocation is made by another process and no
// notification reaches the server (SQLite; PostgreSQL without the
// listener), so HTTP reads the token's record and refuses it, and so
// must the stream.
func TestStreamSendsNothingRevoked(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			w := newWithdrawnWorld(t, b, false)
			tok, rec := dbtest.OpenAPI(t, w.tokens, w.a1.ID)
			ws := dialWS(t, w.srv.URL, tok)
			ws.sub("1", subEvents, nil)
			sse := openSSE(t, w.srv.URL, tok, subEvents)
			waitFor(t, "two subscribers", func() bool { return w.hub.Len() == 2 })
			w.revokeElsewhere(t, rec.ID, tok)
			w.publish()
			expectSocketEnd(t, ws, "a socket whose token was revoked before an event")
			expectSSEEnd(t, sse, "an SSE stream whose token was revoked before an event")
		})
	}
}

// dialUpgrade opens a graphql-transport-ws connection whose upgrade
// carries tok in its Authorization header, without sending anything.
func dialUpgrade(t *testing.T, url, tok string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1), &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"},
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + tok}},
	})
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

// beforeOperation is a hook that runs do while an operation is
// prepared: after its request's token was checked, before it runs.
type beforeOperation struct{ do func() }

func (*beforeOperation) ExtensionName() string                   { return "BeforeOperation" }
func (*beforeOperation) Validate(graphql.ExecutableSchema) error { return nil }

func (h *beforeOperation) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	if strings.HasPrefix(p.Query, "subscription") {
		h.do()
	}
	return nil
}
