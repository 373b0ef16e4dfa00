package main

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

var createdRE = regexp.MustCompile(`created open_api token (\d+) `)

// TestRevokeWhileServing: a token revoked with `server token revoke`,
// which opens its own connection as the separate process it is, is
// refused by a running server within a second (on PostgreSQL, where the
// server caches resolved tokens; on SQLite from the next request), and
// the server writes the token's last use when it stops.
func TestRevokeWhileServing(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			dbURL := b.URL(t)
			appName := ""
			if b.Name == "postgres" {
				// A name of its own, to find this server's listener among
				// those of the tests running beside it.
				appName = "revoke_test_" + strconv.FormatInt(time.Now().UnixNano(), 36)
				dbURL = withParam(dbURL, "application_name", appName)
			}
			env := map[string]string{"DATABASE_URL": dbURL, "UPLOAD_DIR": t.TempDir(), "DEMO": "false", "ADDR": testkit.FreeAddr(t)}
			cliOut(t, env, "seed", "--demo")
			code, tok, stderr := cli(t, env, "token", "create", "--configurator", "1")
			m := createdRE.FindStringSubmatch(stderr)
			if code != 0 || m == nil {
				t.Fatalf("token create: exit %d, stderr %s", code, stderr)
			}
			tok, id := strings.TrimSpace(tok), m[1]

			ctx, cancel := context.WithCancel(context.Background())
			var stdout, serr testkit.SyncBuffer
			done := make(chan int, 1)
			go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, &stdout, &serr) }()
			stop := func() {
				cancel()
				if code := <-done; code != 0 {
					t.Errorf("serve exited %d; want 0\n%s", code, serr.String())
				}
			}
			defer func() {
				if ctx.Err() == nil {
					stop()
				}
			}()
			base := "http://" + env["ADDR"]
			waitReady(t, base)
			if appName != "" {
				waitListening(t, dbURL, appName)
			}

			status := func() int { return viewerStatus(t, base, tok) }
			for range 3 {
				if got := status(); got != http.StatusOK {
					t.Fatalf("GET with a fresh token: %d; want 200", got)
				}
			}
			if code, _, stderr := cli(t, env, "token", "revoke", id); code != 0 {
				t.Fatalf("token revoke %s: exit %d: %s", id, code, stderr)
			}
			deadline := time.Now().Add(time.Second)
			for status() != http.StatusUnauthorized {
				if time.Now().After(deadline) {
					t.Fatalf("token %s still accepted a second after `token revoke`", id)
				}
				time.Sleep(5 * time.Millisecond)
			}

			stop()
			c := dbtest.Open(t, dbURL)
			n, _ := strconv.Atoi(id)
			rec, err := c.APIToken.Get(dbtest.Sys, n)
			if err != nil {
				t.Fatal(err)
			}
			if rec.LastUsedAt == nil {
				t.Error("last_used_at is NULL after the server stopped; want the last use written")
			}
		})
	}
}

// viewerStatus is the status of a GraphQL viewer query with token.
func viewerStatus(t *testing.T, base, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/graphql?query=%7B%20viewer%20%7B%20ownerID%20%7D%20%7D", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// waitListening waits until the server connected as appName listens for
// revocations, so that the requests after it are answered by its cache.
func waitListening(t *testing.T, dbURL, appName string) {
	t.Helper()
	// After LISTEN the listener only sends heartbeats (pgx's "-- ping").
	waitRows(t, dbURL, "the server's revocation listener to connect", `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = $1 || ' listener' AND (query LIKE 'LISTEN %' OR query = '-- ping')`, appName)
}

// waitRows waits up to 10 s until query, a count, counts a row in the
// database at dbURL.
func waitRows(t *testing.T, dbURL, what, query string, args ...any) {
	t.Helper()
	db, _, err := database.OpenSQL(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		err := db.QueryRow(query, args...).Scan(&n)
		if err == nil && n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 10 s waiting for %s (last error %v)", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
