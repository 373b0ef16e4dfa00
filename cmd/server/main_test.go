package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/demo"
	"github.com/configurator/catalogue/internal/playground"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/testkit"
)

// cli runs the binary's run function and returns exit code and outputs.
func cli(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

// cliOut runs the binary's run function and returns its standard output,
// trimmed; it fails the test unless the command exits 0.
func cliOut(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	code, out, stderr := cli(t, env, args...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return strings.TrimSpace(out)
}

// seeded seeds the demo data into c and returns its token store
// (dbtest.Tokens) and an Open API token of configurator 1 (owner 1).
func seeded(t *testing.T, c *ent.Client) (*auth.Tokens, string) {
	t.Helper()
	if _, err := demo.Seed(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	tokens := dbtest.Tokens(c)
	token, _ := dbtest.OpenAPI(t, tokens, 1)
	return tokens, token
}

var jwtRE = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$`)

func TestOperatorCommands(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			env := map[string]string{"DATABASE_URL": url}

			if code, _, stderr := cli(t, env, "migrate"); code != 0 {
				t.Fatalf("migrate: exit %d: %s", code, stderr)
			}
			code, first, stderr := cli(t, env, "seed", "--demo")
			if code != 0 {
				t.Fatalf("seed --demo: exit %d: %s", code, stderr)
			}
			var sum struct {
				Owners []struct {
					ID            int
					Configurators []int
				}
				Created bool
			}
			if err := json.Unmarshal([]byte(first), &sum); err != nil {
				t.Fatalf("seed output is not JSON: %v: %q", err, first)
			}
			if got := fmt.Sprint(sum.Owners); got != "[{1 [1 2]} {2 [3]}]" || !sum.Created {
				t.Errorf("seed summary owners %s created %v; want [{1 [1 2]} {2 [3]}] true", got, sum.Created)
			}
			// Again, with the flag form of the URL: nothing new, same summary.
			code, second, _ := cli(t, nil, "seed", "--demo", "--database-url", url)
			if code != 0 || strings.Replace(second, `"created":false`, `"created":true`, 1) != first {
				t.Errorf("second seed: exit %d\n%s\nwant the first summary\n%s", code, second, first)
			}

			code, tok, stderr := cli(t, env, "token", "create", "--configurator", "1")
			if code != 0 || !jwtRE.MatchString(tok) {
				t.Fatalf("token create --configurator 1: exit %d, stdout %q, stderr %s", code, tok, stderr)
			}
			code, dash, stderr := cli(t, env, "token", "create", "--dashboard", "--owner", "2")
			if code != 0 || !jwtRE.MatchString(dash) {
				t.Fatalf("token create --dashboard --owner 2: exit %d, stdout %q, stderr %s", code, dash, stderr)
			}
			if !strings.Contains(stderr, "revoke: server token revoke") {
				t.Errorf("token create should tell the id on stderr: %q", stderr)
			}

			for _, tc := range []struct {
				args []string
				code int
				msg  string
			}{
				{[]string{"token", "create", "--configurator", "99"}, 1, "configurator 99 not found"},
				{[]string{"token", "create", "--dashboard", "--owner", "99"}, 1, "owner 99 not found"},
				{[]string{"token", "create", "--configurator", "abc"}, 2, "invalid value"},
				{[]string{"token", "create"}, 2, "needs --configurator"},
				{[]string{"token", "create", "--dashboard"}, 2, "needs --owner"},
				{[]string{"token", "create", "--configurator", "1", "--dashboard", "--owner", "1"}, 2, "exclude each other"},
				{[]string{"token", "revoke", "abc"}, 2, "not a token ID"},
				{[]string{"token", "revoke"}, 2, "exactly one token ID"},
				{[]string{"token", "revoke", "999"}, 1, "token 999 not found"},
				{[]string{"token", "revoke", "1"}, 0, ""},
				{[]string{"token", "revoke", "1"}, 0, ""},
				{[]string{"token", "rotate"}, 2, "want create, list or revoke"},
				{[]string{"token", "create", "--configurator", "1", "--ttl", "-1h"}, 2, "--ttl -1h0m0s is negative"},
				{[]string{"token", "create", "--configurator", "1", "--ttl", "day"}, 2, "invalid value"},
				{[]string{"seed"}, 2, "seed --demo"},
				{[]string{"frobnicate"}, 2, "unknown command"},
				{[]string{"serve", "--demo", "maybe"}, 2, "--demo must be"},
			} {
				code, stdout, stderr := cli(t, env, tc.args...)
				if code != tc.code || !strings.Contains(stderr, tc.msg) {
					t.Errorf("%v: exit %d stderr %q; want %d containing %q", tc.args, code, stderr, tc.code, tc.msg)
				}
				if code != 0 && stdout != "" {
					t.Errorf("%v: failed but printed on stdout: %q", tc.args, stdout)
				}
			}
		})
	}
}

func waitReady(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never became ready", base)
}

var tokenRE = regexp.MustCompile(`#token=(\S+)`)

// TestServe runs the service in-process on a fresh database, as `go run
// ./cmd/server` does on a fresh clone (on PostgreSQL with DEMO=true), and
// uses it over HTTP and from the playground in a browser.
func TestServe(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			env := map[string]string{"DATABASE_URL": b.URL(t), "UPLOAD_DIR": t.TempDir()}
			if b.Name == "sqlite" {
				// The default embedded database, in a directory that does not exist yet.
				env["DATABASE_URL"] = "sqlite://" + filepath.Join(t.TempDir(), "data", "configurator.db")
			} else {
				env["DEMO"] = "true"
				// STORAGE_URL names the same directory as its alias UPLOAD_DIR.
				env["STORAGE_URL"] = "file://" + env["UPLOAD_DIR"]
				delete(env, "UPLOAD_DIR")
			}
			testServe(t, env)
		})
	}
}

func testServe(t *testing.T, env map[string]string) {
	base, stdout := serveInProcess(t, env)
	out := stdout.String()
	if !strings.Contains(out, base+"/playground") {
		t.Errorf("serve output does not say where the playground is:\n%s", out)
	}
	m := tokenRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("serve printed no token:\n%s", out)
	}
	token := m[1]

	get := func(path, auth string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	for _, tc := range []struct {
		path, auth string
		status     int
		contains   string
	}{
		{"/healthz", "", 200, `"ok"`},
		{"/readyz", "", 200, `"database":"ok"`},
		{"/playground", "", 200, "<html"},
		{"/graphql?query=" + "%7B%20ordersPage%20%7B%20pagination%20%7B%20total%20%7D%20%7D%20%7D", "Bearer " + token, 200, `"total":30`},
		{"/graphql?query=%7B%20viewer%20%7B%20ownerID%20%7D%20%7D", "", 401, `"UNAUTHENTICATED"`},
		// Introspection needs a token unless GRAPHQL_INTROSPECTION=public.
		{"/graphql?query=%7B%20__schema%20%7B%20queryType%20%7B%20name%20%7D%20%7D%20%7D", "", 401, `"UNAUTHENTICATED"`},
		{"/graphql?query=%7B%20__schema%20%7B%20queryType%20%7B%20name%20%7D%20%7D%20%7D", "Bearer " + token, 200, `"Query"`},
		{"/graphql?query=%7B%20viewer%20%7B%20ownerID%20%7D%20%7D", "Bearer nope", 401, `"UNAUTHENTICATED"`},
		{"/no/such/path", "", 404, "no such path"},
	} {
		res, body := get(tc.path, tc.auth)
		if res.StatusCode != tc.status || !strings.Contains(body, tc.contains) {
			t.Errorf("GET %s: %d %s; want %d containing %s", tc.path, res.StatusCode, body, tc.status, tc.contains)
		}
	}
	req, _ := http.NewRequest(http.MethodPut, base+"/graphql", nil)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT /graphql: %v %v; want 405", res.StatusCode, err)
	}

	// The playground, offline in headless Chromium, opens on the welcome
	// query with the demo token in its headers: one click shows the demo
	// configurator with its options and a page of orders. Its explorer
	// draws the real schema.
	t.Run("playground opens on the demo", func(t *testing.T) {
		bctx := testkit.Browser(t)
		rec := testkit.Record(bctx)
		p := testkit.OpenPlayground(t, bctx, base+"/playground")
		if p.Query != playground.WelcomeQuery {
			t.Errorf("the playground opens on\n%s\nwant the welcome query", p.Query)
		}
		var headers map[string]string
		if err := json.Unmarshal([]byte(p.Headers), &headers); err != nil || headers["Authorization"] != "Bearer "+token {
			t.Errorf("headers editor holds %q (%v); want the demo token", p.Headers, err)
		}
		type configurator struct {
			Name    string
			Options []struct {
				Title      string
				Variations []struct{ Name string }
			}
		}
		var result struct {
			Data struct {
				Configurators struct {
					Edges []struct{ Node configurator }
				}
				OrdersPage struct {
					Pagination struct{ Total int }
					Data       []struct{ ID string }
				}
			}
			Errors []any
		}
		raw := testkit.RunPlayground(t, bctx)
		if err := json.Unmarshal([]byte(raw), &result); err != nil {
			t.Fatalf("result pane holds no JSON (%v):\n%s", err, raw)
		}
		var conf configurator
		if edges := result.Data.Configurators.Edges; len(edges) == 1 {
			conf = edges[0].Node
		}
		orders := result.Data.OrdersPage
		if len(result.Errors) > 0 || conf.Name != "Oslo Lounge Chair" || len(conf.Options) != 9 ||
			conf.Options[0].Title != "Frame Size" || len(conf.Options[0].Variations) != 3 ||
			orders.Pagination.Total != 30 || len(orders.Data) != 5 {
			t.Errorf("the welcome query shows %+v; want Oslo Lounge Chair with its 9 options (Frame Size first, 3 variations), and 5 of 30 orders:\n%s", result, raw)
		}
		fields := testkit.OpenExplorer(t, bctx)
		for _, want := range []string{"viewer", "ordersPage", "materials", "configurator"} {
			if !slices.Contains(fields, want) {
				t.Errorf("the explorer lists %q; want %s among them", fields, want)
			}
		}
		rec.CheckOffline(t)
	})
	t.Run("playground in chromium", func(t *testing.T) {
		bctx := testkit.Browser(t)
		result := testkit.RunPlaygroundQuery(t, bctx, base+"/playground#token="+token,
			`{ ordersPage(perPage: 2, orderBy: ID, order: ASC) { pagination { total lastPage } data { id configurator { name } } } }`)
		for _, want := range []string{`"total": 30`, `"lastPage": 15`, `"configurator"`} {
			if !strings.Contains(result, want) {
				t.Errorf("playground result lacks %s:\n%s", want, result)
			}
		}
	})
	testDocs(t, base, token)
	// Writes last: they add an order to the demo data read above.
	testWrites(t, base, token)
	testPlaygroundSubscription(t, base, token)
}

// TestSIGTERM runs the real binary: on SIGTERM it stops accepting, lets a
// request that is still being sent finish, and exits 0.
func TestSIGTERM(t *testing.T) {
	bin := binary(t)
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(bin, "serve", "--addr", addr)
	cmd.Env = append(os.Environ(), "DATABASE_URL=sqlite://"+filepath.Join(t.TempDir(), "c.db"), "UPLOAD_DIR="+t.TempDir())
	var stdout, stderr testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitReady(t, "http://"+addr)
	token := demoToken(t, &stdout)

	// Start a request and send only half of its body.
	body := `{"query":"{ ordersPage { pagination { total } } }"}`
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, token, len(body), body[:10])
	time.Sleep(200 * time.Millisecond)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("the server still accepts connections after SIGTERM")
	}
	fmt.Fprint(conn, body[10:])
	resp, _ := io.ReadAll(conn)
	if !strings.Contains(string(resp), "200 OK") || !strings.Contains(string(resp), `"total":30`) {
		t.Errorf("in-flight request after SIGTERM got:\n%s", resp)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v; want 0\n%s", err, stderr.String())
	}
}

// TestReadyz: readiness follows the database, liveness does not.
func TestReadyz(t *testing.T) {
	c := dbtest.Open(t, dbtest.SQLite(t))
	cfg := &config.Config{PublicURL: "http://localhost"}
	files := &storage.Files{Store: storage.NewMemory(), BaseURL: "http://localhost/files/"}
	h := newRouter(c, dbtest.Tokens(c), cfg, files, slog.New(slog.NewTextHandler(io.Discard, nil)))
	probe := func(path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	if got := probe("/readyz"); got != http.StatusOK {
		t.Fatalf("/readyz with the database up: %d", got)
	}
	c.Close()
	if got := probe("/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the database closed: %d; want 503", got)
	}
	if got := probe("/healthz"); got != http.StatusOK {
		t.Errorf("/healthz with the database closed: %d; want 200", got)
	}
}

// TestCORS: browser front-ends on other origins may call both transports
// with a bearer token; preflights are answered before routing.
func TestCORS(t *testing.T) {
	c := dbtest.Open(t, dbtest.SQLite(t))
	files := &storage.Files{Store: storage.NewMemory(), BaseURL: "http://localhost/files/"}
	h := newRouter(c, dbtest.Tokens(c), &config.Config{PublicURL: "http://localhost"}, files, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, path := range []string{"/graphql", "/api/open-api/v1/orders", "/api/open-api/v1/textures/1"} {
		req := httptest.NewRequest(http.MethodOptions, path, nil)
		req.Header.Set("Origin", "https://shop.example.com")
		req.Header.Set("Access-Control-Request-Method", http.MethodPost)
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, idempotency-key")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent || rec.Header().Get("Access-Control-Allow-Origin") != "*" ||
			!strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "Authorization") ||
			!strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "Idempotency-Key") {
			t.Errorf("preflight %s = %d %v; want 204 allowing any origin and the Authorization and Idempotency-Key headers", path, rec.Code, rec.Header())
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/api/open-api/v1/orders", nil)
	req.Header.Set("Origin", "https://shop.example.com")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("cross-origin GET without a token = %d, ACAO %q; want 401 readable by the page", rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
	}
	if exposed := rec.Header().Get("Access-Control-Expose-Headers"); !strings.Contains(exposed, "Retry-After") || !strings.Contains(exposed, "Idempotent-Replayed") || !strings.Contains(exposed, "ETag") {
		t.Errorf("cross-origin answers expose %q; want Retry-After, Idempotent-Replayed and ETag readable by the page", exposed)
	}
	req = httptest.NewRequest(http.MethodOptions, "/api/open-api/v1/orders", nil)
	req.Header.Set("Origin", "https://shop.example.com")
	req.Header.Set("Access-Control-Request-Method", http.MethodGet)
	req.Header.Set("Access-Control-Request-Headers", "authorization, if-none-match")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if !strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "If-None-Match") {
		t.Errorf("preflight of a conditional GET allows %q; want If-None-Match", rec.Header().Get("Access-Control-Allow-Headers"))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("same-origin request got CORS headers")
	}
}

// TestConditionalGETsThroughRouter: through the whole router (the
// GraphQL endpoint behind its outage and idempotency wrappers, REST behind
// its mount), a read revalidated with its ETag answers 304 with no body.
func TestConditionalGETsThroughRouter(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		tokens, token := seeded(t, c)
		files := &storage.Files{Store: storage.NewMemory(), BaseURL: "http://localhost/files/"}
		h := newRouter(c, tokens, &config.Config{PublicURL: "http://localhost"}, files, slog.New(slog.NewTextHandler(io.Discard, nil)))
		for _, target := range []string{"/api/open-api/v1/materials/1", "/graphql?query=%7Bmaterial(id:1)%7Bid%20name%7D%7D"} {
			get := func(inm string) *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodGet, target, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				if inm != "" {
					req.Header.Set("If-None-Match", inm)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec
			}
			first := get("")
			tag := first.Header().Get("ETag")
			if first.Code != http.StatusOK || tag == "" || first.Header().Get("Cache-Control") != "private, no-cache" {
				t.Fatalf("GET %s = %d, ETag %q, Cache-Control %q: %s", target, first.Code, tag, first.Header().Get("Cache-Control"), first.Body)
			}
			if rec := get(tag); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 || rec.Header().Get("ETag") != tag {
				t.Errorf("GET %s with its ETag = %d, %d bytes, ETag %q; want 304, none, %s", target, rec.Code, rec.Body.Len(), rec.Header().Get("ETag"), tag)
			}
		}
	})
}

// TestFlagsAnywhere: every subcommand takes its flags before, between or
// after its positional arguments, as the usage text writes them.
func TestFlagsAnywhere(t *testing.T) {
	url := dbtest.SQLite(t)
	for _, args := range [][]string{
		{"migrate", "--database-url", url},
		{"seed", "--database-url", url, "--demo"},
		{"seed", "--demo", "--database-url=" + url},
		{"token", "create", "--configurator", "1", "--database-url", url},
		{"token", "create", "--database-url", url, "--dashboard", "--owner", "1"},
		{"token", "revoke", "1", "--database-url", url},
		{"token", "revoke", "--database-url", url, "2"},
	} {
		if code, _, stderr := cli(t, nil, args...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"token", "revoke", "1", "--database-url"}, "flag needs an argument"},
		{[]string{"token", "revoke", "1", "2", "--database-url", url}, "exactly one token ID"},
		{[]string{"token", "revoke", "--", "-3", "--database-url", url}, "exactly one token ID"},
		{[]string{"token", "revoke", "--nope", "1"}, "flag provided but not defined"},
	} {
		if code, _, stderr := cli(t, nil, tc.args...); code != 2 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d %q; want 2 with %q", tc.args, code, stderr, tc.msg)
		}
	}
}

func TestFlagsFirst(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("database-url", "", "")
	fs.Bool("demo", false, "")
	for _, tc := range []struct{ in, want string }{
		{"3 --database-url u", "--database-url u -- 3"},
		{"--demo 3", "--demo -- 3"},
		{"3 --demo --database-url=u 4", "--demo --database-url=u -- 3 4"},
		{"-- --demo", "-- --demo"},
		{"--unknown 3", "--unknown -- 3"},
	} {
		if got := strings.Join(flagsFirst(fs, strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("flagsFirst(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// TestUsageListsEveryVariable checks that the usage text names every
// environment variable of the README's Configuration section, so that an
// operator who reads `server help` misses none of them.
func TestUsageListsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Configuration\n")
	if !ok {
		t.Fatal("README.md has no Configuration section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	vars := regexp.MustCompile("`([A-Z][A-Z0-9_]{2,})`").FindAllStringSubmatch(section, -1)
	if len(vars) < 15 {
		t.Fatalf("found %d variables in the README's Configuration section; want the whole table", len(vars))
	}
	for _, m := range vars {
		if !regexp.MustCompile(`\b` + m[1] + `\b`).MatchString(usage) {
			t.Errorf("the usage text does not name %s, which the README's Configuration section lists", m[1])
		}
	}
}

// TestPublicURLOfPortZero: on a port the kernel chooses (--addr
// 127.0.0.1:0) and no PUBLIC_URL, the URLs the server gives name the
// port it listens on, not :0.
func TestPublicURLOfPortZero(t *testing.T) {
	env := map[string]string{"ADDR": "127.0.0.1:0", "DEMO": "false", "UPLOAD_DIR": t.TempDir(),
		"DATABASE_URL": "sqlite://" + filepath.Join(t.TempDir(), "configurator.db")}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testkit.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, &stdout, &stderr) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	var addr string
	for addr == "" {
		if m := listeningRE.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the server did not listen:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if want := "GraphQL playground: http://" + addr + "/playground"; !strings.Contains(stdout.String(), want) {
		t.Errorf("serve printed\n%s\nwant %q", stdout.String(), want)
	}
	if want := "public_url=http://" + addr; !strings.Contains(stderr.String(), want) {
		t.Errorf("serve logged\n%s\nwant %q", stderr.String(), want)
	}
}
