package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/configurator/catalogue/ent/idempotencykey"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/idempotency"
)

// restOrder is an order creation over REST with an Idempotency-Key.
func restOrder(base, token, key string, n int) *http.Request {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("configurator_id", "1")
	mw.WriteField("price", fmt.Sprint(10+n%90))
	mw.WriteField("customer_details", fmt.Sprintf(`{"name":"Retention %d"}`, n))
	mw.WriteField("configurator_summary", `{}`)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/open-api/v1/orders", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return withAuth(req, token, key)
}

// countRows counts the rows of query, failing the test on an error.
func countRows(t *testing.T, db *sql.DB, query string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// waitZero waits up to d until query counts no row.
func waitZero(t *testing.T, db *sql.DB, d time.Duration, what, query string) {
	t.Helper()
	n := 0
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if n = countRows(t, db, query); n == 0 {
			return
		}
	}
	t.Fatalf("after %s, %d rows of %s are left", d, n, what)
}

// TestRetentionKeepsLiveKeys: the binary's periodic retention job
// removes an idempotency key past its TTL and keeps one inside it, whose
// retry over REST still gets the first order, replayed (issue 42's
// Done-when), on each database.
func TestRetentionKeepsLiveKeys(t *testing.T) {
	bin := binary(t)
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			dbURL := b.URL(t)
			if out, err := exec.Command(bin, "seed", "--demo", "--database-url", dbURL).CombinedOutput(); err != nil {
				t.Fatalf("seed: %v\n%s", err, out)
			}
			open := cliToken(t, bin, dbURL, "--configurator", "1")
			p := startKillable(t, bin, map[string]string{"DATABASE_URL": dbURL, "DEMO": "false", "RETENTION_EVERY": "100ms"})
			client := &http.Client{Timeout: 30 * time.Second}
			first := send(t, client, restOrder(p.base, open, "live", 1))
			if first.status != http.StatusCreated || first.id == 0 {
				t.Fatalf("first request: %d %s; want 201", first.status, first.body)
			}
			c := dbtest.Open(t, dbURL)
			k := c.IdempotencyKey.Query().Where(idempotencykey.Key("live")).OnlyX(dbtest.Sys)
			dbtest.Must(c.IdempotencyKey.Create().SetOwnerID(k.OwnerID).SetKey("expired").SetFingerprint("fp").SetOrderID(first.id).
				SetCreatedAt(time.Now().Add(-idempotency.TTL - time.Minute)).SetExpiresAt(time.Now().Add(-time.Minute)).Save(dbtest.Sys))
			db := dbtest.SQL(t, dbURL)
			// Nothing else removes a key that no request sends again: the
			// periodic job did, and in the same statement kept the live one.
			waitZero(t, db, 20*time.Second, "the expired key", `SELECT count(*) FROM idempotency_keys WHERE key = 'expired'`)
			retry := send(t, client, restOrder(p.base, open, "live", 1))
			if retry.status != http.StatusCreated || retry.id != first.id || retry.header.Get(idempotency.ReplayedHeader) != "true" {
				t.Errorf("retry inside the TTL after the retention ran: %d %s (%s=%q); want order %d replayed",
					retry.status, retry.body, idempotency.ReplayedHeader, retry.header.Get(idempotency.ReplayedHeader), first.id)
			}
			if n := countRows(t, db, `SELECT count(*) FROM idempotency_keys`); n != 1 {
				t.Errorf("%d idempotency keys left; want 1 (the live one)", n)
			}
		})
	}
}

// flakyReceiver is a webhook endpoint that fails every other attempt.
type flakyReceiver struct {
	addr string
	n    atomic.Int64
}

func newFlakyReceiver(t *testing.T) *flakyReceiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &flakyReceiver{addr: ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if r.n.Add(1)%2 == 0 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return r
}

// finishedJobs inserts River jobs that ended long ago, as River's own
// would be, and returns the ids of those River's cleaner must remove and
// of those it must keep (JOB_RETENTION, an hour by default, for
// completed, cancelled and discarded jobs alike).
func finishedJobs(t *testing.T, dbURL string) (gone, kept []int64) {
	db, dialect, err := database.OpenSQL(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := database.QueueDriver(db, dialect).GetExecutor()
	for _, j := range []struct {
		state rivertype.JobState
		age   time.Duration
		goes  bool
	}{
		{rivertype.JobStateCompleted, 2 * time.Hour, true},
		{rivertype.JobStateCompleted, 10 * time.Minute, false},
		{rivertype.JobStateCancelled, 2 * time.Hour, true},
		{rivertype.JobStateCancelled, 10 * time.Minute, false},
		{rivertype.JobStateDiscarded, 2 * time.Hour, true},
		{rivertype.JobStateDiscarded, 10 * time.Minute, false},
	} {
		at := time.Now().Add(-j.age)
		row, err := exec.JobInsertFull(context.Background(), &riverdriver.JobInsertFullParams{
			CreatedAt: &at, FinalizedAt: &at, ScheduledAt: &at, AttemptedAt: &at, Attempt: 1, MaxAttempts: 1,
			EncodedArgs: []byte(`{}`), Metadata: []byte(`{}`), Kind: "retention_test", Priority: 1, Queue: "default", State: j.state,
		})
		if err != nil {
			t.Fatalf("insert a %s job: %v", j.state, err)
		}
		if j.goes {
			gone = append(gone, row.ID)
		} else {
			kept = append(kept, row.ID)
		}
	}
	return gone, kept
}

// soakCount is one sample of the plateau test: the rows of each table
// and how many of them had been written by then.
type soakCount struct {
	at                             time.Duration
	events, deliveries, keys       int
	orphans                        int
	wroteEvents, wroteKeys, orders int64
}

// soakWriter creates orders over REST with an Idempotency-Key and
// updates them, from several clients, until stop.
type soakWriter struct {
	base, token, dash string
	client            *http.Client
	seq, events, keys atomic.Int64
	lastOrder         atomic.Int64
	mu                sync.Mutex
	bad               []string
}

// pace is the time between two writes of one client: four clients
// write about 20 times a second, which the server takes on a loaded
// machine, so that what stays in the tables is what the retention keeps,
// not a backlog of deliveries the server cannot send as fast.
const pace = 200 * time.Millisecond

func (w *soakWriter) run(stop <-chan struct{}) {
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		n := w.seq.Add(1)
		if n%3 == 0 && w.lastOrder.Load() > 0 {
			w.update(n)
			continue
		}
		res, err := w.client.Do(restOrder(w.base, w.token, fmt.Sprintf("soak-%d", n), int(n)))
		if err != nil || res.StatusCode != http.StatusCreated {
			w.note("create", res, err)
			continue
		}
		loc := res.Header.Get("Location")
		res.Body.Close()
		var id int64
		fmt.Sscanf(loc[bytes.LastIndexByte([]byte(loc), '/')+1:], "%d", &id)
		w.lastOrder.Store(id)
		w.keys.Add(1)
		w.events.Add(1)
	}
}

func (w *soakWriter) update(n int64) {
	req, _ := http.NewRequest(http.MethodPatch, fmt.Sprintf("%s/api/open-api/v1/orders/%d", w.base, w.lastOrder.Load()),
		bytes.NewReader(fmt.Appendf(nil, `{"status":"step-%d"}`, n)))
	req.Header.Set("Content-Type", "application/json")
	res, err := w.client.Do(withAuth(req, w.dash, "")) // an Open API token may not update orders
	if err != nil || res.StatusCode != http.StatusOK {
		w.note("update", res, err)
		return
	}
	res.Body.Close()
	w.events.Add(1)
}

func (w *soakWriter) note(what string, res *http.Response, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if res != nil {
		res.Body.Close()
		err = fmt.Errorf("status %d", res.StatusCode)
	}
	w.bad = append(w.bad, fmt.Sprintf("%s: %v", what, err))
}

// sampleSoak counts the tables every interval until stop.
func sampleSoak(t *testing.T, db *sql.DB, w *soakWriter, start time.Time, stop <-chan struct{}) []soakCount {
	var out []soakCount
	count := func(q string) int { // not countRows: this is not the test's goroutine
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Errorf("%s: %v", q, err)
		}
		return n
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return out
		case <-tick.C:
		}
		s := soakCount{at: time.Since(start),
			events:     count(`SELECT count(*) FROM events`),
			deliveries: count(`SELECT count(*) FROM webhook_deliveries`),
			keys:       count(`SELECT count(*) FROM idempotency_keys`),
			orphans: count(`SELECT count(*) FROM webhook_deliveries d
				WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)`)}
		s.wroteEvents, s.wroteKeys = w.events.Load(), w.keys.Load()
		out = append(out, s)
	}
}

// TestRetentionPlateau is bench/soak.sh compressed (issue 42, the soak's
// plateau): the binary on each database, every retention a second and
// the leader removing every 300 ms, takes order creations (REST, an
// Idempotency-Key each) and updates from four clients (about 20 a
// second) for 45 s, with two webhook endpoints active, one failing every
// other attempt (retried after 200 ms). In the last third, every sample
// of events, webhook deliveries and idempotency keys holds no more rows
// than were written in the 15 s before it (the rate times a bound of a
// row's stay: its retention, the leader's interval, the dispatch and the
// retries, with room for a loaded machine; without retention a table
// would hold everything written, three times as much), and no delivery
// outlives its event. Once the writes stop the three tables empty and
// every order stays; River's cleaner removes the jobs that ended before
// its periods and keeps the others.
func TestRetentionPlateau(t *testing.T) {
	bin := binary(t)
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			dbURL := b.URL(t)
			if out, err := exec.Command(bin, "seed", "--demo", "--database-url", dbURL).CombinedOutput(); err != nil {
				t.Fatalf("seed: %v\n%s", err, out)
			}
			gone, kept := finishedJobs(t, dbURL)
			open := cliToken(t, bin, dbURL, "--configurator", "1")
			dash := cliToken(t, bin, dbURL, "--dashboard", "--owner", "1")
			db := dbtest.SQL(t, dbURL)
			demoOrders := countRows(t, db, `SELECT count(*) FROM orders`)
			p := startKillable(t, bin, map[string]string{"DATABASE_URL": dbURL, "DEMO": "false", "RATE_LIMIT_PER_MINUTE": "0",
				"WEBHOOK_ALLOW_PRIVATE": "true", "WEBHOOK_RETRY_SCHEDULE": "200ms,200ms",
				"EVENT_RETENTION": "1s", "WEBHOOK_DELIVERY_RETENTION": "1s", "IDEMPOTENCY_TTL": "1s", "RETENTION_EVERY": "300ms"})
			for _, addr := range []string{newHookReceiver(t).addr, newFlakyReceiver(t).addr} {
				graphqlPost(t, p.base, dash, `mutation($u: String!) { createWebhookEndpoint(input: {url: $u, eventTypes: ["order.created", "order.updated"]}) { secret } }`,
					map[string]any{"u": "http://" + addr + "/hook"}, nil)
			}
			w := &soakWriter{base: p.base, token: open, dash: dash, client: &http.Client{Timeout: 30 * time.Second}}
			const d = 45 * time.Second
			stop, sampled := make(chan struct{}), make(chan []soakCount)
			start := time.Now()
			go func() { sampled <- sampleSoak(t, db, w, start, stop) }()
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() { w.run(stop) })
			}
			time.Sleep(d)
			close(stop)
			wg.Wait()
			checkPlateau(t, <-sampled, d, w)
			// Once the writes stop, everything that served its purpose goes.
			for what, q := range map[string]string{"events": `SELECT count(*) FROM events`,
				"webhook deliveries": `SELECT count(*) FROM webhook_deliveries`, "idempotency keys": `SELECT count(*) FROM idempotency_keys`} {
				waitZero(t, db, time.Minute, what, q)
			}
			if n := countRows(t, db, `SELECT count(*) FROM orders`); n != demoOrders+int(w.keys.Load()) {
				t.Errorf("%d orders; want every one kept: %d of the demo and %d created", n, demoOrders, w.keys.Load())
			}
			checkJobs(t, db, gone, kept)
		})
	}
}

// stay bounds how long a row of the plateau test stays (see
// TestRetentionPlateau).
const stay = 15 * time.Second

// checkPlateau judges the samples of the last third of the writes: each
// table holds at most what was written in the stay before (+20 rows).
func checkPlateau(t *testing.T, samples []soakCount, d time.Duration, w *soakWriter) {
	t.Helper()
	if len(w.bad) > 0 {
		t.Errorf("%d writes failed, first: %s", len(w.bad), w.bad[0])
	}
	if w.events.Load() < 100 {
		t.Fatalf("only %d events written in %s: too few to tell a plateau from growth", w.events.Load(), d)
	}
	judged := 0
	for i, s := range samples {
		if s.orphans > 0 {
			t.Errorf("at %s: %d deliveries whose event is gone", s.at, s.orphans)
		}
		if s.at < 2*d/3 {
			continue
		}
		before := samples[0]
		for _, b := range samples[:i] {
			if b.at <= s.at-stay {
				before = b
			}
		}
		events, keys := int(s.wroteEvents-before.wroteEvents), int(s.wroteKeys-before.wroteKeys)
		judged++
		if s.events > events+20 || s.deliveries > 2*events+20 || s.keys > keys+20 {
			t.Errorf("at %s: %d events, %d deliveries, %d keys; %d events and %d keys were written since %s (%d and %d in all); want at most those (+20)",
				s.at.Round(time.Millisecond), s.events, s.deliveries, s.keys, events, keys, before.at.Round(time.Millisecond), s.wroteEvents, s.wroteKeys)
		}
	}
	last := samples[len(samples)-1]
	t.Logf("%d events and %d keys written in %s; at the end %d events, %d deliveries, %d keys (%d samples judged)",
		w.events.Load(), w.keys.Load(), d, last.events, last.deliveries, last.keys, judged)
	if judged < 5 {
		t.Errorf("%d samples in the last third; want at least 5", judged)
	}
}

// checkJobs waits up to a minute (River's cleaner runs when a leader is
// elected, then every 30 s) until the jobs past River's periods are gone,
// and checks that the others stay.
func checkJobs(t *testing.T, db *sql.DB, gone, kept []int64) {
	t.Helper()
	count := func(ids []int64) int {
		n := 0
		for _, id := range ids {
			n += countRows(t, db, fmt.Sprintf(`SELECT count(*) FROM river_job WHERE id = %d`, id))
		}
		return n
	}
	for deadline := time.Now().Add(time.Minute); count(gone) > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if n := count(gone); n > 0 {
		t.Errorf("%d of %d jobs past River's periods are still there after a minute", n, len(gone))
	}
	if n := count(kept); n != len(kept) {
		t.Errorf("%d of %d jobs inside River's periods are left; want all", n, len(kept))
	}
}
