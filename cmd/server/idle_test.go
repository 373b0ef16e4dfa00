package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
)

// idleWindow is how long TestIdleTransactions counts the transactions of
// an idle server, and idleRate how many a second it may make meanwhile
// (issue 42). idleSettle bounds the wait for the server to be idle: its
// job queue runs from the start for a minute or so (the retention and the
// settling of deliveries run then) and stops at a review, every 30 s.
const (
	idleWindow = time.Minute
	idleRate   = 1.0
	idleSettle = 3 * time.Minute
)

// TestIdleTransactions runs the binary on an empty database of a
// PostgreSQL cluster of the test's own (so that no other test's work is
// counted), waits until its /metrics says that its job queue has stopped
// (webhook_queue_working 0: the start's work is done), then counts the
// transactions its database committed and rolled back (pg_stat_database,
// read from another database) over a minute while nothing asks anything
// of the server: at most idleRate a second. The outbox polled every 25 ms
// made about 56; the dispatch woken by commits with River always running,
// 1.1 to 1.7.
func TestIdleTransactions(t *testing.T) {
	// It mostly waits (for the queue to stop, then a minute), on a cluster
	// of its own that no other test touches: it waits beside the others.
	t.Parallel()
	cl := dbtest.NewCluster(t)
	dbURL := createDatabase(t, cl.URL, "idle")
	p := startBinary(t, map[string]string{"DATABASE_URL": dbURL, "DEMO": "true"})
	stats, _, err := database.OpenSQL(cl.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer stats.Close()
	xacts := func() float64 {
		t.Helper()
		var n float64
		// Read in a transaction of its own each time: the statistics
		// snapshot lasts as long as the transaction that took it.
		if err := stats.QueryRow(`SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'idle'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitIdle(t, p.base)
	before := xacts()
	time.Sleep(idleWindow)
	n := xacts() - before
	if rate := n / idleWindow.Seconds(); rate > idleRate {
		t.Errorf("an idle server made %.0f transactions in %s = %.2f a second; want at most %.1f", n, idleWindow, rate, idleRate)
	}
	t.Logf("idle: %.0f transactions in %s", n, idleWindow)
}

// waitIdle waits until the server at base says that its job queue has
// stopped (webhook_queue_working 0), at most idleSettle.
func waitIdle(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(idleSettle)
	for {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "\nwebhook_queue_working 0\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job queue still runs %s after the start (webhook_queue_working not 0)", idleSettle)
		}
		time.Sleep(time.Second)
	}
}
