package main

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/testkit"
)

// attempt is one request of an order creation, as a client saw it.
type attempt struct {
	key        string
	start, end time.Time
	status     int
	code       string
	retryAfter string
	replayed   bool
	id         int
	body       string
	err        error // a transport error: no answer
}

// created reports whether the attempt created (or replayed) its order.
func (a attempt) created() bool {
	return a.err == nil && a.id != 0 && (a.status == http.StatusCreated || a.status == http.StatusOK)
}

// outage reports whether the attempt was answered as an outage should be:
// 503, Retry-After, code UNAVAILABLE, and no driver text.
func (a attempt) outage() bool {
	return a.err == nil && a.status == http.StatusServiceUnavailable && a.retryAfter == apperr.RetryAfter &&
		a.code == string(apperr.Unavailable) && !strings.Contains(a.body, "127.0.0.1") && !strings.Contains(a.body, "connect")
}

// orderClient creates orders with Idempotency-Keys, alternating REST and
// GraphQL, retrying each with its key until it gets its order, and
// records every attempt.
type orderClient struct {
	base, token string
	client      *http.Client

	mu       sync.Mutex
	attempts []attempt
	orders   map[string]int // key -> the order its 201 named
}

// place creates the order of key, retrying (pause between attempts) until
// it succeeds or giveUp passes; it reports whether it got the order.
func (c *orderClient) place(key string, seq int, pause time.Duration, giveUp time.Time) bool {
	o := orderReq{configurator: 1, price: fmt.Sprintf("%d.5", 10+seq%90), details: fmt.Sprintf(`{"name":"Load","key":%q}`, key)}
	if seq%3 == 0 {
		o.snapshot = testkit.PNG(8, 8, uint8(seq))
	}
	for {
		var req *http.Request
		if seq%2 == 0 {
			req = o.rest(c.base, c.token, key)
		} else {
			req = o.graphql(c.base, c.token, key)
		}
		a := attempt{key: key, start: time.Now()}
		res, err := c.client.Do(req)
		if err != nil {
			a.err = err
		} else {
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			a.status, a.body, a.retryAfter = res.StatusCode, string(raw), res.Header.Get("Retry-After")
			a.replayed = res.Header.Get(idempotency.ReplayedHeader) == "true"
			a.id, a.code, _ = orderOrError(raw)
		}
		a.end = time.Now()
		c.mu.Lock()
		c.attempts = append(c.attempts, a)
		if a.created() {
			c.orders[key] = a.id
		}
		c.mu.Unlock()
		if a.created() {
			return true
		}
		if time.Now().After(giveUp) {
			return false
		}
		time.Sleep(pause)
	}
}

// TestDatabaseRestart is the fault test: the real binary on a throwaway
// PostgreSQL takes orders with Idempotency-Keys from concurrent clients
// (REST and GraphQL) while the database crashes and comes back. Every
// order that was answered 201 is readable afterwards, none exists twice,
// the outage is answered only with 503 (Retry-After, UNAVAILABLE, no
// driver text) and never slower than the request deadline, /readyz says
// 503 meanwhile, and the service, its revocation listener included,
// recovers once the database is back (within recoverWithin: a bound
// for a loaded CI machine, not a measure; bench/restart.sh measures how
// soon, about as soon as the database). Two faults: a crash and
// restart (connections cut and refused), and a hang longer than the
// request deadline (nothing answers), which the deadline turns into 503s.
// A token revoked while the listener is still away is refused at once:
// the cache does not answer from entries it may have missed a revocation
// of.
func TestDatabaseRestart(t *testing.T) {
	const recoverWithin = 30 * time.Second
	cl := dbtest.NewCluster(t)
	const app = "fault_test"
	dbURL := withParam(cl.URL, "application_name", app)
	const requestTimeout = 3 * time.Second
	p := startBinary(t, map[string]string{
		"DATABASE_URL": dbURL, "DEMO": "true", "REQUEST_TIMEOUT": requestTimeout.String(), "DB_STATEMENT_TIMEOUT": "2s",
	})
	waitListening(t, dbURL, app)

	// A second token, used (so cached) before the outage and revoked
	// right after it.
	env := map[string]string{"DATABASE_URL": dbURL}
	code, token2, stderr := cli(t, env, "token", "create", "--configurator", "1")
	m := createdRE.FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("token create: exit %d: %s", code, stderr)
	}
	token2, token2ID := strings.TrimSpace(token2), m[1]
	for range 3 {
		if s := viewerStatus(t, p.base, token2); s != http.StatusOK {
			t.Fatalf("second token before the outage: %d; want 200", s)
		}
	}

	const workers = 16
	const pause = 100 * time.Millisecond // between a client's retries
	c := &orderClient{base: p.base, token: p.token, client: loadClient(workers, requestTimeout+5*time.Second), orders: map[string]int{}}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var lost atomic.Int64
	giveUp := time.Now().Add(2 * time.Minute)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; !stop.Load(); seq++ {
				if !c.place(fmt.Sprintf("w%02d-%04d", w, seq), w*10000+seq, pause, giveUp) {
					lost.Add(1)
					return
				}
			}
		}()
	}

	// probeReady polls /readyz until the outage ends and counts its 503s.
	probeReady := func(f *fault, until time.Duration) {
		for time.Since(f.stop) < until {
			if res, err := http.Get(p.base + "/readyz"); err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "" {
					f.readyDown++
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	time.Sleep(1500 * time.Millisecond)

	// A crash: connections cut, connection attempts refused, then
	// recovery from the WAL on the restart.
	crash := &fault{name: "crash and restart", stop: time.Now()}
	cl.Stop("immediate")
	probeReady(crash, 2*time.Second)
	cl.Start()
	crash.back = time.Now()

	// Revoke the second token at once, likely before the listener is
	// back to hear it.
	if code, _, stderr := cli(t, env, "token", "revoke", token2ID); code != 0 {
		t.Fatalf("token revoke: exit %d: %s", code, stderr)
	}
	s := viewerStatus(t, p.base, token2)
	for s == http.StatusServiceUnavailable && time.Since(crash.back) < recoverWithin {
		time.Sleep(50 * time.Millisecond)
		s = viewerStatus(t, p.base, token2)
	}
	if s != http.StatusUnauthorized {
		t.Errorf("a token revoked just after the database came back: %d; want 401", s)
	}
	waitListening(t, dbURL, app)
	crash.listener = time.Since(crash.back)
	time.Sleep(3*time.Second - time.Since(crash.back))

	// A hang: the database answers nothing (connections open, attempts
	// accepted by the kernel) for longer than the request deadline.
	hang := &fault{name: "hang", stop: time.Now()}
	cl.Freeze()
	probeReady(hang, requestTimeout+time.Second)
	cl.Thaw()
	hang.back = time.Now()
	waitListening(t, dbURL, app)
	hang.listener = time.Since(hang.back)
	time.Sleep(3*time.Second - time.Since(hang.back))

	stop.Store(true)
	wg.Wait()
	if s := viewerStatus(t, p.base, token2); s != http.StatusUnauthorized {
		t.Errorf("the revoked token with the listener back: %d; want 401", s)
	}
	readyStatus := 0
	if res, err := http.Get(p.base + "/readyz"); err == nil {
		res.Body.Close()
		readyStatus = res.StatusCode
	}
	if readyStatus != http.StatusOK {
		t.Errorf("/readyz after the recovery: %d; want 200", readyStatus)
	}

	// Judge every attempt: an order, or an outage's 503 that ended after
	// a fault began and started before the service recovered from it.
	faults := []*fault{crash, hang}
	var created, replays int
	var bad []attempt
	var slowest time.Duration
	for _, a := range c.attempts {
		slowest = max(slowest, a.end.Sub(a.start))
		if a.end.Sub(a.start) > requestTimeout+time.Second {
			bad = append(bad, a)
			continue
		}
		if a.created() {
			created++
			if a.replayed {
				replays++
			}
			for _, f := range faults {
				if a.start.After(f.back) && (f.firstAfter.IsZero() || a.end.Before(f.firstAfter)) {
					f.firstAfter = a.end
				}
			}
			continue
		}
		var in *fault
		for _, f := range faults {
			if a.outage() && a.end.After(f.stop) && a.start.Before(f.back.Add(recoverWithin)) {
				in = f
			}
		}
		switch {
		case in == nil:
			bad = append(bad, a)
		case a.start.Before(in.back):
			in.during++
		default:
			in.after++
			if a.end.After(in.lastOutage) {
				in.lastOutage = a.end
			}
		}
	}

	// Every 201 names an order that is readable, and the database holds
	// exactly one order per key.
	readable := 0
	keys := make([]string, 0, len(c.orders))
	for k := range c.orders {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := send(t, http.DefaultClient, withAuth(mustRequest(http.MethodGet, fmt.Sprintf("%s/api/open-api/v1/orders/%d", p.base, c.orders[k])), p.token, ""))
		if a.status == http.StatusOK && strings.Contains(a.body, fmt.Sprintf(`"key":%q`, k)) {
			readable++
		} else {
			t.Errorf("order %d of key %s: %d %s; want it readable", c.orders[k], k, a.status, a.body)
		}
	}
	stored := ordersByKey(t, cl.URL)
	duplicates, phantoms := 0, 0
	for k, ids := range stored {
		if len(ids) > 1 {
			duplicates += len(ids) - 1
			t.Errorf("key %s created %d orders: %v", k, len(ids), ids)
		}
		if _, ok := c.orders[k]; !ok {
			phantoms++
			t.Errorf("key %s has orders %v but was never answered 201", k, ids)
		}
	}

	t.Logf("sent %d requests for %d keys: %d answered with their order (%d of them replays), %d readable after, %d duplicates, %d orders without a 201, %d keys given up; slowest answer %s (deadline %s), %d answers neither an order nor an outage's 503",
		len(c.attempts), len(c.orders)+int(lost.Load()), created, replays, readable, duplicates, phantoms, lost.Load(),
		slowest.Round(time.Millisecond), requestTimeout, len(bad))
	for _, f := range faults {
		t.Logf("%s for %s: %d answers 503 during it, %d after the database was back; /readyz 503 %d times; recovery %s after the database was back (listener back after %s)",
			f.name, f.back.Sub(f.stop).Round(time.Millisecond), f.during, f.after, f.readyDown, f.recovery().Round(time.Millisecond), f.listener.Round(time.Millisecond))
		if f.during == 0 {
			t.Errorf("%s: no request met it, the test did not test it", f.name)
		}
		if f.readyDown == 0 {
			t.Errorf("%s: /readyz never answered 503 with Retry-After", f.name)
		}
		if f.firstAfter.IsZero() || f.recovery() >= recoverWithin {
			t.Errorf("%s: the service recovered %s after the database; want under %s", f.name, f.recovery(), recoverWithin)
		}
		if f.listener >= recoverWithin {
			t.Errorf("%s: the revocation listener was back %s after the database; want under %s", f.name, f.listener, recoverWithin)
		}
	}

	for i, a := range bad {
		if i == 10 {
			t.Errorf("... and %d more", len(bad)-10)
			break
		}
		t.Errorf("key %s at %s (crash at %s) took %s: %d %v %s (Retry-After %q); want 201, or 503 UNAVAILABLE with Retry-After during an outage, within the deadline",
			a.key, a.start.Format("15:04:05.000"), crash.stop.Format("15:04:05.000"), a.end.Sub(a.start).Round(time.Millisecond), a.status, a.err, tail(a.body, 300), a.retryAfter)
	}
	if lost.Load() > 0 {
		t.Errorf("%d clients gave up on a key after two minutes of retries", lost.Load())
	}
	if readable != len(c.orders) || len(stored) != len(c.orders) {
		t.Errorf("%d keys answered 201, %d readable, %d in the database; want all equal", len(c.orders), readable, len(stored))
	}
}

// fault is one outage of the database and what the clients saw of it.
type fault struct {
	name       string
	stop, back time.Time // when it began, when the database was back
	readyDown  int       // /readyz answers 503 with Retry-After
	during     int       // 503s of requests started during it
	after      int       // 503s of requests started after the database was back
	lastOutage time.Time // the end of the last of those
	firstAfter time.Time // the first order answered to a request started after it
	listener   time.Duration
}

// recovery is how long after the database's return the service answered
// as usual again: until its last 503, or its first order if later.
func (f *fault) recovery() time.Duration {
	if f.lastOutage.After(f.firstAfter) {
		return f.lastOutage.Sub(f.back)
	}
	return f.firstAfter.Sub(f.back)
}

func mustRequest(method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		panic(err)
	}
	return req
}

// TestIdleRestart: PostgreSQL restarted while a replica is idle costs
// its clients nothing once the database is back (docs/operations.md, A
// PostgreSQL restart): the pool's connections, all cut by the restart
// and idle for less than the ping interval, would each answer its next
// statement with the server's goodbye (57P01); since the listener saw its
// own connection go (database.NoteLost), they are pinged before their
// next use and the dead ones replaced. The reads are sent as soon as the
// database accepts connections again, before the listener is back (so the
// token cache is off and each read loads its token too).
func TestIdleRestart(t *testing.T) {
	t.Parallel()
	cl := dbtest.NewCluster(t)
	const app = "idle_restart_test"
	dbURL := withParam(cl.URL, "application_name", app)
	p := startBinary(t, map[string]string{"DATABASE_URL": dbURL, "DEMO": "true"})
	waitListening(t, dbURL, app)
	// A read of the database (the token is cached; the orders are not).
	read := func() answer {
		return send(t, http.DefaultClient, withAuth(mustRequest(http.MethodGet, p.base+"/api/open-api/v1/orders?per_page=5"), p.token, ""))
	}
	// Fill the pool: reads at once, until it holds at least 6 connections
	// (background work uses a few of the cut ones before the reads come).
	db, _, err := database.OpenSQL(cl.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pooled := func() (n int) {
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for deadline := time.Now().Add(30 * time.Second); pooled() < 6; {
		if time.Now().After(deadline) {
			t.Fatalf("the server's pool holds %d connections after 30 s of reads at once; want 6", pooled())
		}
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				for range 10 {
					read()
				}
			})
		}
		wg.Wait()
	}
	db.Close()

	cl.Stop("fast")
	cl.Start()
	var failed []string
	for range 12 {
		if a := read(); a.status != http.StatusOK {
			failed = append(failed, fmt.Sprintf("%d %.120s", a.status, a.body))
		}
	}
	if len(failed) > 0 {
		t.Errorf("after PostgreSQL's restart, %d of 12 reads answered %q; want every one 200", len(failed), failed)
	}
}
