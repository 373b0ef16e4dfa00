package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// serveInProcess runs serve with env on a free loopback port until the
// test ends, and returns its base URL and its output.
func serveInProcess(t *testing.T, env map[string]string) (string, *testkit.SyncBuffer) {
	t.Helper()
	env["ADDR"] = testkit.FreeAddr(t)
	base := "http://" + env["ADDR"]
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testkit.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, &stdout, &stderr) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d after cancel; want 0\n%s", code, stderr.String())
		}
	})
	waitReady(t, base)
	return base, &stdout
}

// demoServer runs serve with env and the demo data, and returns its base
// URL and the demo token.
func demoServer(t *testing.T, env map[string]string) (string, string) {
	t.Helper()
	env["UPLOAD_DIR"] = t.TempDir()
	env["DEMO"] = "true"
	base, stdout := serveInProcess(t, env)
	m := tokenRE.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("serve printed no token:\n%s", stdout.String())
	}
	return base, m[1]
}

// TestDeadlines: a request held up by the database (a table locked by
// another session) is answered 503 UNAVAILABLE with Retry-After when its
// deadline (REQUEST_TIMEOUT) passes, on both transports and databases,
// and on PostgreSQL when statement_timeout (DB_STATEMENT_TIMEOUT) cancels
// its statement first; once the lock is gone the same requests succeed.
func TestDeadlines(t *testing.T) {
	for _, b := range dbtest.Backends() {
		for _, tc := range []struct {
			name  string
			env   map[string]string
			limit time.Duration // the bound that should end the wait
		}{
			{"request deadline", map[string]string{"REQUEST_TIMEOUT": "1s", "DB_STATEMENT_TIMEOUT": "0"}, time.Second},
			{"statement timeout", map[string]string{"REQUEST_TIMEOUT": "20s", "DB_STATEMENT_TIMEOUT": "300ms"}, 300 * time.Millisecond},
		} {
			if b.Name == "sqlite" && tc.name == "statement timeout" {
				continue // PostgreSQL's setting
			}
			t.Run(b.Name+"/"+tc.name, func(t *testing.T) {
				dbURL := b.URL(t)
				tc.env["DATABASE_URL"] = dbURL
				base, token := demoServer(t, tc.env)

				// PostgreSQL: the orders locked against reads; SQLite:
				// the write lock taken, so an order creation waits.
				db := dbtest.SQL(t, dbURL)
				conn, err := db.Conn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				lock, unlock := "LOCK TABLE orders IN ACCESS EXCLUSIVE MODE", "COMMIT"
				if b.Name == "sqlite" {
					lock, unlock = "INSERT INTO settings (key, value) VALUES ('deadline_test', 'x')", "COMMIT"
				}
				begin := "BEGIN"
				if b.Name == "sqlite" {
					begin = "BEGIN IMMEDIATE"
				}
				for _, q := range []string{begin, lock} {
					if _, err := conn.ExecContext(context.Background(), q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				order := orderReq{configurator: 1, price: "10", details: `{"name":"Late"}`}
				requests := []func(key string) *http.Request{
					func(key string) *http.Request { return order.rest(base, token, key) },
					func(key string) *http.Request { return order.graphql(base, token, key) },
				}
				if b.Name != "sqlite" {
					requests = append(requests,
						func(string) *http.Request {
							return withAuth(mustRequest(http.MethodGet, base+"/api/open-api/v1/orders"), token, "")
						},
						func(string) *http.Request {
							return withAuth(mustRequest(http.MethodGet, base+"/graphql?query="+url.QueryEscape(loadQuery)), token, "")
						})
				}
				for i, req := range requests {
					t0 := time.Now()
					a := send(t, http.DefaultClient, req("late-"+string(rune('a'+i))))
					took := time.Since(t0)
					if a.status != http.StatusServiceUnavailable || a.code != string(apperr.Unavailable) || a.header.Get("Retry-After") != apperr.RetryAfter {
						t.Errorf("request %d with the database held up: %d %s (Retry-After %q); want 503 UNAVAILABLE with Retry-After",
							i, a.status, a.body, a.header.Get("Retry-After"))
					}
					// Generous: the bound, plus the time a loaded CI
					// machine may take; far below the 10 s of SQLite's
					// busy_timeout and the 20 s deadline of the
					// statement-timeout case.
					if took < tc.limit || took > tc.limit+3*time.Second {
						t.Errorf("request %d answered after %s; want just after %s", i, took, tc.limit)
					}
				}
				if _, err := conn.ExecContext(context.Background(), unlock); err != nil {
					t.Fatal(err)
				}
				for i, req := range requests {
					a := send(t, http.DefaultClient, req("late-"+string(rune('a'+i))))
					if a.status != http.StatusOK && a.status != http.StatusCreated || a.code != "" {
						t.Errorf("request %d after the lock is gone: %d %s; want success", i, a.status, a.body)
					}
				}
			})
		}
	}
}

// TestServerLimits: serve bounds the request headers (431 above 64 KiB)
// and derives its read and write timeouts and shutdown grace from the
// request deadline.
func TestServerLimits(t *testing.T) {
	base, token := demoServer(t, map[string]string{"DATABASE_URL": dbtest.SQLite(t)})
	for _, tc := range []struct {
		extra  int
		status int
	}{
		{1 << 10, http.StatusOK},
		{maxHeaderBytes + 8<<10, http.StatusRequestHeaderFieldsTooLarge},
	} {
		req := withAuth(mustRequest(http.MethodGet, base+"/api/open-api/v1/orders?per_page=1"), token, "")
		req.Header.Set("X-Padding", strings.Repeat("p", tc.extra))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("a request with %d bytes of headers: %d; want %d", tc.extra, res.StatusCode, tc.status)
		}
	}
	for _, tc := range []struct {
		deadline, read, write, grace time.Duration
	}{
		{30 * time.Second, 30 * time.Second, 35 * time.Second, 35 * time.Second},
		{3 * time.Second, 3 * time.Second, 8 * time.Second, 8 * time.Second},
		{0, 0, 0, 35 * time.Second},
	} {
		read, write, grace := serverTimeouts(tc.deadline)
		if read != tc.read || write != tc.write || grace != tc.grace {
			t.Errorf("serverTimeouts(%s) = %s, %s, %s; want %s, %s, %s", tc.deadline, read, write, grace, tc.read, tc.write, tc.grace)
		}
	}
}
