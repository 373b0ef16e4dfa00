package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	jwtlib "github.com/golang-jwt/jwt/v5"

	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/oidctest"
)

// transportResult is what one transport answered a token.
type transportResult struct {
	ok      bool
	expired bool   // refused as expired (WWW-Authenticate or message)
	detail  string // for failure messages
}

// transports calls the service at base with token on every transport
// that takes one: REST, GraphQL over GET and POST, a subscription over
// Server-Sent Events, and a WebSocket's connection_init.
func transports(t *testing.T, base, token string) map[string]transportResult {
	t.Helper()
	out := map[string]transportResult{}
	do := func(name string, req *http.Request) {
		req.Header.Set("Authorization", "Bearer "+token)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer res.Body.Close()
		var body []byte
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			body, _ = io.ReadAll(res.Body)
		}
		www := res.Header.Get("WWW-Authenticate")
		out[name] = transportResult{
			ok:      res.StatusCode == http.StatusOK,
			expired: res.StatusCode == http.StatusUnauthorized && strings.Contains(www, `error_description="token expired"`),
			detail:  fmt.Sprintf("%d %s %.200s", res.StatusCode, www, body),
		}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/api/open-api/v1/orders?per_page=1", nil)
	do("REST", req)
	req, _ = http.NewRequest(http.MethodGet, base+"/graphql?query=%7Bviewer%7BownerID%7D%7D", nil)
	do("GraphQL GET", req)
	req, _ = http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(`{"query":"{viewer{ownerID}}"}`))
	req.Header.Set("Content-Type", "application/json")
	do("GraphQL POST", req)
	req, _ = http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(`{"query":"subscription{events{type}}"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	do("GraphQL SSE", req)
	out["GraphQL WebSocket"] = wsInit(t, base, token)
	return out
}

// wsInit opens a graphql-transport-ws connection and sends token in
// connection_init.
func wsInit(t *testing.T, base, token string) transportResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(base, "http", "ws", 1)+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatalf("WebSocket: %v", err)
	}
	defer conn.CloseNow()
	b, _ := json.Marshal(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}})
	if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatalf("WebSocket: %v", err)
	}
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			// gqlgen closes a graphql-transport-ws connection whose
			// connection_init it refused without telling why (the
			// protocol has no connection_error); a refusal is all there
			// is to see.
			return transportResult{expired: websocket.CloseStatus(err) != -1, detail: err.Error()}
		}
		var m struct{ Type string }
		json.Unmarshal(b, &m)
		switch m.Type {
		case "ping", "pong":
			continue
		case "connection_ack":
			return transportResult{ok: true, detail: string(b)}
		}
		return transportResult{expired: bytes.Contains(b, []byte("expired")), detail: string(b)}
	}
}

// TestOwnTokenTTLEveryTransport: a token created with `token create --ttl`
// carries its exp, `token list` shows it, and a running server accepts
// it on every transport until exp (plus the 5 s leeway) and refuses it
// from then on as expired, with RFC 6750's error_description.
func TestOwnTokenTTLEveryTransport(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			env := map[string]string{"DATABASE_URL": b.URL(t), "UPLOAD_DIR": t.TempDir(), "DEMO": "false"}
			cliOut(t, env, "seed", "--demo")
			// The server first: under load its start (migrations
			// included) took longer than the token lives.
			base, _ := serveInProcess(t, env)
			code, tok, stderr := cli(t, env, "token", "create", "--configurator", "1", "--ttl", "2s")
			if code != 0 || !strings.Contains(stderr, ", expires ") {
				t.Fatalf("token create --ttl 2s: exit %d, stderr %s", code, stderr)
			}
			tok = strings.TrimSpace(tok)
			var claims jwtlib.RegisteredClaims
			if _, _, err := jwtlib.NewParser().ParseUnverified(tok, &claims); err != nil || claims.ExpiresAt == nil {
				t.Fatalf("token without exp: %v", err)
			}
			exp := claims.ExpiresAt.Time
			if d := time.Until(exp); d > 2*time.Second || d < 0 {
				t.Fatalf("exp %v is %v away; want within 2s", exp, d)
			}
			for name, r := range transports(t, base, tok) {
				if !r.ok {
					t.Errorf("%s before exp: %s; want accepted", name, r.detail)
				}
			}
			code, list, _ := cli(t, env, "token", "list")
			if code != 0 || !strings.Contains(list, exp.UTC().Format(time.RFC3339)) {
				t.Errorf("token list: exit %d\n%s\nwant the expiry %s", code, list, exp.UTC().Format(time.RFC3339))
			}
			time.Sleep(time.Until(exp.Add(5 * time.Second)))
			for name, r := range transports(t, base, tok) {
				if r.ok || !r.expired {
					t.Errorf("%s after exp: %s; want refused as expired", name, r.detail)
				}
			}
		})
	}
}

var kidLineRE = regexp.MustCompile(`(?m)^([0-9a-f]{16})\s`)

// kidHeader returns the kid header of a JWT.
func kidHeader(t *testing.T, jwt string) string {
	t.Helper()
	tok, _, err := jwtlib.NewParser().ParseUnverified(jwt, &jwtlib.RegisteredClaims{})
	if err != nil {
		t.Fatal(err)
	}
	kid, _ := tok.Header["kid"].(string)
	return kid
}

// TestKeysCommands: `keys list` shows the key that signs; `keys rotate`
// adds one that signs the tokens created after it, which a running server
// accepts (from another process: at once on PostgreSQL, within
// KeysEvery on SQLite) while still accepting the older tokens; `keys
// retire` of the old key makes the server refuse the old tokens and keep
// the new. The newest key cannot be retired, and with JWT_SECRET set the
// database's keys are not managed.
func TestKeysCommands(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			env := map[string]string{"DATABASE_URL": b.URL(t), "UPLOAD_DIR": t.TempDir(), "DEMO": "false"}
			cliOut(t, env, "seed", "--demo")
			code, list, stderr := cli(t, env, "keys", "list")
			keys := kidLineRE.FindAllStringSubmatch(list, -1)
			if code != 0 || len(keys) != 1 || !strings.Contains(list, "signs") {
				t.Fatalf("keys list: exit %d %s\n%s\nwant one key that signs", code, stderr, list)
			}
			first := keys[0][1]
			oldTok := cliOut(t, env, "token", "create", "--configurator", "1")
			if kidHeader(t, oldTok) != first {
				t.Fatalf("token kid %q; want %q", kidHeader(t, oldTok), first)
			}
			base, _ := serveInProcess(t, env)
			if got := viewerStatus(t, base, oldTok); got != http.StatusOK {
				t.Fatalf("old token: %d", got)
			}

			code, out, stderr := cli(t, env, "keys", "rotate")
			if code != 0 || !strings.Contains(out, "added signing key") {
				t.Fatalf("keys rotate: exit %d %s %s", code, out, stderr)
			}
			_, list, _ = cli(t, env, "keys", "list")
			keys = kidLineRE.FindAllStringSubmatch(list, -1)
			if len(keys) != 2 || keys[0][1] != first {
				t.Fatalf("keys list after rotate:\n%s", list)
			}
			second := keys[1][1]
			newTok := cliOut(t, env, "token", "create", "--dashboard", "--owner", "1")
			if kidHeader(t, newTok) != second {
				t.Fatalf("token created after rotate has kid %q; want %q", kidHeader(t, newTok), second)
			}
			waitStatus(t, base, newTok, http.StatusOK, "the new key's token")
			if got := viewerStatus(t, base, oldTok); got != http.StatusOK {
				t.Errorf("old token after rotate: %d; want 200", got)
			}

			for _, tc := range []struct {
				args []string
				env  map[string]string
				code int
				msg  string
			}{
				{[]string{"keys", "retire", second}, env, 1, "is the newest"},
				{[]string{"keys", "retire", "0123456789abcdef"}, env, 1, "not found"},
				{[]string{"keys", "retire"}, env, 2, "exactly one key id"},
				{[]string{"keys", "spin"}, env, 2, "want list, rotate or retire"},
				{[]string{"keys", "rotate"}, map[string]string{"DATABASE_URL": env["DATABASE_URL"], "JWT_SECRET": strings.Repeat("s", 32)}, 1, "JWT_SECRET is set"},
			} {
				code, stdout, stderr := cli(t, tc.env, tc.args...)
				if code != tc.code || !strings.Contains(stderr, tc.msg) || (code != 0 && stdout != "") {
					t.Errorf("%v: exit %d stdout %q stderr %q; want %d containing %q", tc.args, code, stdout, stderr, tc.code, tc.msg)
				}
			}

			if code, out, stderr := cli(t, env, "keys", "retire", first); code != 0 {
				t.Fatalf("keys retire: exit %d %s %s", code, out, stderr)
			}
			waitStatus(t, base, oldTok, http.StatusUnauthorized, "the retired key's token")
			if got := viewerStatus(t, base, newTok); got != http.StatusOK {
				t.Errorf("new token after retire: %d; want 200", got)
			}
		})
	}
}

// waitStatus waits up to 10 s (twice KeysEvery) for the viewer query with
// token to answer want.
func waitStatus(t *testing.T, base, token string, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := viewerStatus(t, base, token)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d; want %d within 10 s", what, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestProviderTokenEveryTransport: with OIDC_ISSUER set, a client
// credentials token of a real OpenID provider (oidc-provider) calls REST
// and GraphQL over GET, POST, Server-Sent Events and WebSocket, and the
// playground, beside the service's own tokens; a token of another audience
// is refused on every transport; the provider's key rotation is picked up
// without restarting.
func TestProviderTokenEveryTransport(t *testing.T) {
	idp := oidctest.Start(t, map[string]oidctest.Client{
		"shop":  {Claims: map[string]any{"owner_id": 1, "configurator_id": 1}, Alg: "ES256"},
		"admin": {Claims: map[string]any{"owner_id": "1"}},
	})
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			env := map[string]string{"DATABASE_URL": b.URL(t), "UPLOAD_DIR": t.TempDir(), "DEMO": "false",
				"OIDC_ISSUER": idp.Issuer, "OIDC_AUDIENCE": oidctest.Audience}
			cliOut(t, env, "seed", "--demo")
			own := cliOut(t, env, "token", "create", "--configurator", "2")
			base, _ := serveInProcess(t, env)
			shop := idp.Token(t, "shop", auth.ScopeOpenAPI, "")
			admin := idp.Token(t, "admin", auth.ScopeDashboard, "")
			for who, tok := range map[string]string{"provider Open API token": shop, "provider dashboard token": admin, "own token": own} {
				for name, r := range transports(t, base, tok) {
					if !r.ok {
						t.Errorf("%s on %s: %s; want accepted", who, name, r.detail)
					}
				}
			}
			var data struct {
				Viewer struct {
					OwnerID      string
					TokenKind    string
					Configurator struct{ ID string }
				}
			}
			graphqlPost(t, base, shop, `{ viewer { ownerID tokenKind configurator { id } } }`, nil, &data)
			if v := data.Viewer; v.OwnerID != "1" || v.TokenKind != "open_api" || v.Configurator.ID != "1" {
				t.Errorf("viewer of the provider's Open API token: %+v", v)
			}
			for name, r := range transports(t, base, idp.Token(t, "shop", auth.ScopeOpenAPI, "https://other.test")) {
				if r.ok {
					t.Errorf("a token of another audience on %s: %s; want refused", name, r.detail)
				}
			}
			idp.Rotate(t)
			rotated := idp.Token(t, "admin", auth.ScopeDashboard, "")
			if kidHeader(t, rotated) == kidHeader(t, admin) {
				t.Fatal("the provider did not rotate")
			}
			if got := viewerStatus(t, base, rotated); got != http.StatusOK {
				t.Errorf("a token of the provider's new key: %d; want 200", got)
			}
			testPlaygroundSubscription(t, base, shop)
		})
	}
}

// TestStreamsEndAtExpiry: an open subscription, over Server-Sent Events
// and over WebSocket, of a token created with --ttl ends within 5 s of the
// token's exp (and not before it), on every database.
func TestStreamsEndAtExpiry(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			env := map[string]string{"DATABASE_URL": b.URL(t), "UPLOAD_DIR": t.TempDir(), "DEMO": "false"}
			cliOut(t, env, "seed", "--demo")
			base, _ := serveInProcess(t, env)
			tok := cliOut(t, env, "token", "create", "--configurator", "1", "--ttl", "4s")
			var claims jwtlib.RegisteredClaims
			if _, _, err := jwtlib.NewParser().ParseUnverified(tok, &claims); err != nil || claims.ExpiresAt == nil {
				t.Fatalf("token without exp: %v", err)
			}
			exp := claims.ExpiresAt.Time

			sse := subscribeSSE(t, base, tok, `subscription { events { type } }`)
			sseEnded := make(chan time.Time, 1)
			go func() {
				for range sse {
				}
				sseEnded <- time.Now()
			}()

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, _, err := websocket.Dial(ctx, strings.Replace(base, "http", "ws", 1)+"/graphql",
				&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			send := func(m map[string]any) {
				b, _ := json.Marshal(m)
				if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
					t.Fatal(err)
				}
			}
			send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + tok}})
			send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": `subscription { events { type } }`}})
			wsEnded := make(chan time.Time, 1)
			go func() {
				for {
					if _, _, err := conn.Read(ctx); err != nil {
						wsEnded <- time.Now()
						return
					}
				}
			}()
			for name, ch := range map[string]chan time.Time{"SSE": sseEnded, "WebSocket": wsEnded} {
				select {
				case at := <-ch:
					if at.Before(exp) || at.After(exp.Add(5*time.Second)) {
						t.Errorf("%s subscription ended %v after exp; want within 5 s of it", name, at.Sub(exp))
					}
				case <-time.After(time.Until(exp.Add(10 * time.Second))):
					t.Errorf("%s subscription still open 10 s after exp", name)
				}
			}
		})
	}
}
