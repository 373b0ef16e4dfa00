package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/configurator/catalogue/internal/dbtest"
)

// TestTricklingBodyEndsAtTheDeadline: a request whose body trickles in
// (here: stops after a few bytes) is ended when the request deadline
// (REQUEST_TIMEOUT) passes, whatever headers it carries: a REST write and
// a GraphQL POST, each with Accept: text/event-stream, with Upgrade:
// websocket, and with neither. The server answers or closes the
// connection while the client still owes most of its body; the client
// never sends it, so an unbounded read shows as a connection still open
// after a generous bound, many times the deadline.
func TestTricklingBodyEndsAtTheDeadline(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			base, token := demoServer(t, map[string]string{"DATABASE_URL": b.URL(t), "REQUEST_TIMEOUT": "1s"})
			addr := strings.TrimPrefix(base, "http://")
			for _, path := range []string{"/api/open-api/v1/orders", "/graphql"} {
				for _, extra := range []string{"", "Accept: text/event-stream\r\n", "Upgrade: websocket\r\nConnection: Upgrade\r\n",
					"Accept: text/event-stream\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"} {
					name := path + " " + strings.ReplaceAll(strings.TrimSpace(extra), "\r\n", ", ")
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						status, err := trickle(addr, path, token, extra, 20*time.Second)
						if err != nil {
							t.Errorf("a body that stopped after 16 of 4096 bytes: %v; want the request ended at the deadline (1 s)", err)
						} else if f := strings.Fields(status); len(f) > 1 && f[1][0] != '4' && f[1] != "503" {
							t.Errorf("a body that stopped after 16 of 4096 bytes: answered %q; want a 4xx or 503, or the connection closed", status)
						}
					})
				}
			}
		})
	}
}

// trickle sends a POST to path on addr whose headers announce a body of
// 4096 bytes (JSON for GraphQL, a form for REST), sends 16 of them and nothing more, and waits up to bound
// for the server to answer (its status line) or close the connection
// (""). It returns an error when the connection is still open at bound.
func trickle(addr, path, token, extra string, bound time.Duration) (string, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	ct, start := "application/json", `{"query":"{ __ty`
	if strings.HasPrefix(path, "/api/") {
		ct, start = "application/x-www-form-urlencoded", "configurator_id="
	}
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\n%sContent-Length: 4096\r\n\r\n",
		path, addr, token, ct, extra)
	if _, err := conn.Write([]byte(head + start)); err != nil {
		return "", err
	}
	conn.SetReadDeadline(time.Now().Add(bound))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return "", fmt.Errorf("the connection is still open and unanswered after %s", bound)
	}
	if err != nil {
		return "", nil // closed by the server
	}
	return strings.TrimSpace(line), nil
}

// TestSubscriptionsOutliveTheDeadline: a subscription, over WebSocket and
// over SSE, is lifted from the request deadline by its endpoint: with
// REQUEST_TIMEOUT=1s, both still receive an event written after the
// deadline has passed (the test waits for it to pass: the order of
// nothing depends on the wait), and a REST write made meanwhile with
// streaming headers is still answered.
func TestSubscriptionsOutliveTheDeadline(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			base, token := demoServer(t, map[string]string{"DATABASE_URL": b.URL(t), "REQUEST_TIMEOUT": "1s"})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, _, err := websocket.Dial(ctx, strings.Replace(base, "http", "ws", 1)+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			for _, m := range []string{`{"type":"connection_init","payload":{"Authorization":"Bearer ` + token + `"}}`,
				`{"id":"1","type":"subscribe","payload":{"query":"subscription { events { type } }"}}`} {
				if err := conn.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
					t.Fatal(err)
				}
			}
			sse := subscribeSSE(t, base, token, `subscription { events { type } }`)
			time.Sleep(1500 * time.Millisecond) // past the deadline
			req := orderReq{configurator: 1, price: "10", details: `{"name":"After the deadline"}`}.rest(base, token, "")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if a := send(t, http.DefaultClient, req); a.status != http.StatusCreated {
				t.Fatalf("an order written past the streams' deadline: %d %s", a.status, a.body)
			}
			for {
				_, m, err := conn.Read(ctx)
				if err != nil {
					t.Fatalf("the socket ended past the deadline: %v; want the event", err)
				}
				if strings.Contains(string(m), `"next"`) {
					break
				}
			}
			select {
			case e, ok := <-sse:
				if !ok || !strings.Contains(string(e), "order.created") {
					t.Errorf("the SSE stream past the deadline: %s (open %v); want the event", e, ok)
				}
			case <-ctx.Done():
				t.Error("the SSE stream sent nothing past the deadline; want the event")
			}
		})
	}
}
