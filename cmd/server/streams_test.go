package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/configurator/catalogue/internal/dbtest"
)

// TestRevokeEndsStreams runs the binary: a token revoked by `server token
// revoke`, another process, ends the token's open streams within 5 s: its
// WebSocket closes 4403, its SSE stream's last event is an
// UNAUTHENTICATED error. On PostgreSQL the streams are held by two
// replicas, one each, which hear the revocation's NOTIFY; on SQLite the
// server rereads the tokens of its streams every 2 s.
func TestRevokeEndsStreams(t *testing.T) {
	bin := binary(t)
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			dbURL := b.URL(t)
			env := map[string]string{"DATABASE_URL": dbURL, "DEMO": "false", "STORAGE_URL": "file://" + t.TempDir()}
			if out, err := exec.Command(bin, "seed", "--demo", "--database-url", dbURL).CombinedOutput(); err != nil {
				t.Fatalf("seed: %v\n%s", err, out)
			}
			code, out, stderr := cliBin(t, bin, "token", "create", "--configurator", "1", "--database-url", dbURL)
			m := tokenIDRE.FindStringSubmatch(stderr)
			if code != 0 || m == nil {
				t.Fatalf("token create: exit %d: %s", code, stderr)
			}
			tok, id := strings.TrimSpace(out), m[1]
			a := startKillable(t, bin, env)
			sseBase := a.base
			if b.Name == "postgres" {
				sseBase = startKillable(t, bin, env).base
			}

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, _, err := websocket.Dial(ctx, strings.Replace(a.base, "http", "ws", 1)+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			send := func(v any) {
				b, _ := json.Marshal(v)
				if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
					t.Fatal(err)
				}
			}
			send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + tok}})
			if _, b, err := conn.Read(ctx); err != nil || !strings.Contains(string(b), "connection_ack") {
				t.Fatalf("connection_init: %s %v; want connection_ack", b, err)
			}
			send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": `subscription { events { type } }`}})
			closed := make(chan error, 1)
			go func() {
				for {
					if _, _, err := conn.Read(context.Background()); err != nil {
						closed <- err
						return
					}
				}
			}()
			sse := subscribeSSE(t, sseBase, tok, `subscription { events { type } }`)
			time.Sleep(200 * time.Millisecond)

			if out, err := exec.Command(bin, "token", "revoke", id, "--database-url", dbURL).CombinedOutput(); err != nil {
				t.Fatalf("token revoke: %v\n%s", err, out)
			}
			start := time.Now()
			select {
			case err := <-closed:
				var ce websocket.CloseError
				if !errors.As(err, &ce) || ce.Code != 4403 {
					t.Errorf("the revoked token's socket ended with %v; want close 4403", err)
				}
				t.Logf("socket closed %v after `token revoke` returned", time.Since(start).Round(time.Millisecond))
			case <-time.After(5 * time.Second):
				t.Error("the revoked token's socket is open 5 s after `token revoke`")
			}
			var last json.RawMessage
			for done := false; !done; {
				select {
				case e, ok := <-sse:
					if !ok {
						done = true
					} else {
						last = e
					}
				case <-time.After(time.Until(start.Add(5 * time.Second))):
					t.Fatalf("the revoked token's SSE stream is open 5 s after `token revoke`; last event %s", last)
				}
			}
			if !strings.Contains(string(last), `"code":"UNAUTHENTICATED"`) {
				t.Errorf("the revoked token's SSE stream ended with %s; want an UNAUTHENTICATED error", last)
			}
			t.Logf("SSE stream ended %v after `token revoke` returned", time.Since(start).Round(time.Millisecond))
		})
	}
}
