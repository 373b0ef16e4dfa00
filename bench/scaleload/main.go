// Command scaleload measures what bench/scale.sh reports of a running
// server over the reference dataset: the time of single reads with one
// client (page 1, the middle and the last page of every order, W3, an
// order by id), and order creation throughput over GraphQL with one
// client, with eight on one configurator and with eight spread over eight
// configurators (alternating rounds), and over a sustained run in 10 s
// windows, with the CPU time each order cost in each window. While orders
// are created it samples PostgreSQL's pg_stat_activity every 50 ms and
// reports the share of samples in which some backend of the product's
// database waits on a heavyweight lock (wait_event_type 'Lock'), and
// which locks those were, and what the active backends wait on.
package main

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/configurator/catalogue/bench/internal/gqlpost"
)

func main() {
	base := flag.String("base", "http://127.0.0.1:8080", "the server")
	token := flag.String("token", "", "an Open API token")
	dbURL := flag.String("db", "", "the product's PostgreSQL database, for the lock samples")
	n := flag.Int("n", 200, "timed requests of each read")
	dur := flag.Duration("d", 10*time.Second, "duration of one creation round")
	rounds := flag.Int("r", 2, "rounds of 8 clients on one configurator against 8 spread over eight")
	sustained := flag.Duration("sustained", 90*time.Second, "duration of the sustained run (0: none)")
	conns := flag.Int("c", 8, "concurrent clients")
	serverPID := flag.Int("server-pid", 0, "the server's process, for the CPU time per order of the sustained run")
	flag.Parse()

	db, err := sql.Open("pgx", *dbURL)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * *conns}, Timeout: 60 * time.Second}
	l := &load{serverPID: *serverPID, client: client, base: *base, token: *token, db: db}
	l.reads(*n)
	l.creation(*dur, *rounds, *conns)
	if *sustained > 0 {
		l.sustain(*sustained, *conns)
	}
	var dead, live, pages int64
	if err := db.QueryRow(`SELECT n_dead_tup, n_live_tup, pg_relation_size('order_counts') / 8192 FROM pg_stat_user_tables WHERE relname = 'order_counts'`).Scan(&dead, &live, &pages); err == nil {
		fmt.Printf("\norder_counts at the end: %d live rows, %d dead, %d pages\n", live, dead, pages)
	}
}

// reads times each read with one client: n requests after 5 warm-ups,
// the reads taking turns.
func (l *load) reads(n int) {
	const list = "/api/open-api/v1/orders?per_page=20&page="
	var first struct {
		Pagination struct {
			Total    int
			LastPage int `json:"last_page"`
		}
	}
	l.get(list+"1", &first)
	last := first.Pagination.LastPage
	if last < 1 {
		log.Fatalf("no orders to page through: %+v", first)
	}
	fmt.Printf("orders: %d (%d pages of 20)\n\n", first.Pagination.Total, last)
	fmt.Println("| read (one client) | median ms | p90 ms |")
	fmt.Println("|---|---:|---:|")
	reads := []struct {
		name string
		path func(r *rand.Rand) string
	}{
		{"orders page 1 (newest first)", func(*rand.Rand) string { return list + "1" }},
		{fmt.Sprintf("orders, middle page (%d)", (last+1)/2), func(*rand.Rand) string { return fmt.Sprint(list, (last+1)/2) }},
		{fmt.Sprintf("orders, last page (%d)", last), func(*rand.Rand) string { return fmt.Sprint(list, last) }},
		{"W3: 20 orders of a configurator in a date range, with the total", func(r *rand.Rand) string {
			return fmt.Sprintf("/api/open-api/v1/orders?per_page=20&page=1&configurator_id=%d&start_date=2024-03-01&end_date=2024-06-01&order_by=created_at&order=desc", 1+r.IntN(20))
		}},
		{"an order by id", func(r *rand.Rand) string {
			return fmt.Sprintf("/api/open-api/v1/orders/%d", 1+r.IntN(first.Pagination.Total))
		}},
	}
	// The reads take turns, one request of each in every turn, so that
	// the machine's other load (a noisy neighbour, a checkpoint) falls
	// on all of them alike: the figures are compared with each other
	// (the last page against page 1).
	r := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		for _, rd := range reads {
			l.get(rd.path(r), nil)
		}
	}
	ms := make([][]float64, len(reads))
	for range n {
		for i, rd := range reads {
			start := time.Now()
			l.get(rd.path(r), nil)
			ms[i] = append(ms[i], float64(time.Since(start).Microseconds())/1000)
		}
	}
	for i, rd := range reads {
		fmt.Printf("| %s | %.2f | %.2f |\n", rd.name, quantile(ms[i], 0.5), quantile(ms[i], 0.9))
	}
}

// creation measures order creation with one client, then conns clients
// on one configurator against conns spread over eight, in alternating
// rounds of dur.
func (l *load) creation(dur time.Duration, rounds, conns int) {
	fmt.Println()
	fmt.Println("| creation | round | orders/s | samples with a lock wait | waiting locks seen, by type |")
	fmt.Println("|---|---:|---:|---:|---|")
	single := l.create(dur, 1, 1)
	fmt.Printf("| 1 client | 1 | %.0f | %s |\n", single.rate(), single.locks())
	// Both shapes once, untimed, before the rounds: the first orders of
	// concurrent clients after the copy pay for what starts then
	// (autovacuum and analyze of the copied tables, cold caches), which
	// would otherwise fall on whichever shape runs first.
	l.create(dur/2, conns, 1)
	l.create(dur/2, conns, 8)
	var one, spread []result
	var cpuOne, cpuSpread [2]float64 // CPU ms of all orders of a shape: server, database
	for r := 1; r <= rounds; r++ {
		order := []int{1, 8}
		if r%2 == 0 {
			order = []int{8, 1}
		}
		for _, confs := range order {
			before := l.cpu()
			res := l.create(dur, conns, confs)
			after := l.cpu()
			name := fmt.Sprintf("%d clients on one configurator", conns)
			used := &cpuOne
			if confs > 1 {
				name = fmt.Sprintf("%d clients spread over %d configurators", conns, confs)
				spread = append(spread, res)
				used = &cpuSpread
			} else {
				one = append(one, res)
			}
			for i := range used { // clock ticks are 10 ms
				used[i] += float64(after[i]-before[i]) * 10
			}
			fmt.Printf("| %s | %d | %.0f | %s |\n", name, r, res.rate(), res.locks())
		}
	}
	o, s := sum(one), sum(spread)
	fmt.Printf("\nover %d rounds: %.0f orders/s on one configurator (%.1f%% of samples with a lock wait, %.1f%% but the sender's), %.0f spread over eight (%.1f%%, %.1f%%): ratio %.2f\n",
		rounds, o.rate(), o.lockShare(), o.writesShare(), s.rate(), s.lockShare(), s.writesShare(), o.rate()/s.rate())
	if l.serverPID != 0 && o.orders > 0 && s.orders > 0 {
		fmt.Printf("CPU ms per order, server+database: %.2f+%.2f on one configurator, %.2f+%.2f spread over eight\n",
			cpuOne[0]/float64(o.orders), cpuOne[1]/float64(o.orders), cpuSpread[0]/float64(s.orders), cpuSpread[1]/float64(s.orders))
	}
	fmt.Printf("active backends by wait, one configurator: %s\n", o.waits())
	fmt.Printf("active backends by wait, spread over eight: %s\n", s.waits())
}

// waits lists the most frequent states of r's active backends, as mean
// backends per sample (the lightweight waits too: buffer content locks on
// an index's last page, the WAL's), to tell where concurrent orders wait.
func (r result) waits() string {
	type state struct {
		name string
		n    int
	}
	var ss []state
	for k, n := range r.states {
		ss = append(ss, state{k, n})
	}
	slices.SortFunc(ss, func(a, b state) int { return cmp.Or(b.n-a.n, strings.Compare(a.name, b.name)) })
	var out []string
	for _, st := range ss[:min(len(ss), 6)] {
		out = append(out, fmt.Sprintf("%s %.2f", st.name, float64(st.n)/float64(max(r.samples, 1))))
	}
	return cmp.Or(strings.Join(out, ", "), "none")
}

// sustain runs conns clients on one configurator for d and prints their
// rate per 10 s window and, with -server-pid, the CPU time each order
// cost in each window (server and database backends), which the machine's
// other load does not change as it changes the rate.
func (l *load) sustain(d time.Duration, conns int) {
	fmt.Printf("\nsustained: %d clients on one configurator for %v, orders/s per 10 s window:\n", conns, d)
	cpus := make(chan [][2]int64, 1)
	go func() {
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		at := [][2]int64{l.cpu()}
		for range int(d / (10 * time.Second)) {
			<-tick.C
			at = append(at, l.cpu())
		}
		cpus <- at
	}()
	res := l.create(d, conns, 1)
	var line []string
	for _, w := range res.windows {
		line = append(line, fmt.Sprintf("%.0f", float64(w)/10))
	}
	fmt.Println(strings.Join(line, " "))
	if len(res.windows) > 1 {
		fmt.Printf("last 10 s / first 10 s: %.2f; %.1f%% of samples with a lock wait, %.1f%% but the sender's (%s)\n",
			float64(res.windows[len(res.windows)-1])/float64(res.windows[0]), res.lockShare(), res.writesShare(), res.kinds())
	}
	if l.serverPID == 0 {
		return
	}
	at := <-cpus
	line = line[:0]
	for i, w := range res.windows {
		if i+1 < len(at) && w > 0 {
			// Clock ticks are 10 ms.
			line = append(line, fmt.Sprintf("%.2f+%.2f", float64(at[i+1][0]-at[i][0])*10/float64(w), float64(at[i+1][1]-at[i][1])*10/float64(w)))
		}
	}
	fmt.Printf("CPU ms per order per 10 s window, server+database: %s\n", strings.Join(line, " "))
}

// cpu is the CPU time, in clock ticks, of the server process and of the
// backends of the product's database (but the sampler's own), in that order.
func (l *load) cpu() [2]int64 {
	var db int64
	rows, err := l.db.Query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		rows.Scan(&pid)
		db += ticks(pid)
	}
	return [2]int64{ticks(l.serverPID), db}
}

// ticks is the CPU time (user and system) of process pid in clock ticks,
// from /proc; 0 when it is gone.
func ticks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil || pid == 0 {
		return 0
	}
	// The fields after the command's closing parenthesis start at the
	// third, the state; utime and stime are the 14th and 15th.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

type load struct {
	// serverPID is the server's process, for its CPU time (0: unknown).
	serverPID int
	client    *http.Client
	base      string
	token     string
	db        *sql.DB
}

// result is what one creation run measured.
type result struct {
	orders  int
	secs    float64
	samples int
	waiting int
	// writesWaiting counts the samples with a wait of another backend
	// than the sender of notifications.
	writesWaiting int
	byKind        map[string]int
	windows       []int
	// states counts, over the samples, the active backends of the
	// product's database by what they wait on (type:event, or "running").
	states map[string]int
}

func (r result) rate() float64 { return float64(r.orders) / r.secs }

func (r result) lockShare() float64   { return r.share(r.waiting) }
func (r result) writesShare() float64 { return r.share(r.writesWaiting) }

// share is n in percent of the samples.
func (r result) share(n int) float64 {
	if r.samples == 0 {
		return 0
	}
	return 100 * float64(n) / float64(r.samples)
}

func (r result) kinds() string {
	var ks []string
	for k, n := range r.byKind {
		ks = append(ks, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(ks)
	return cmp.Or(strings.Join(ks, ", "), "none")
}

func (r result) locks() string {
	return fmt.Sprintf("%.1f%% of %d (%.1f%% but the sender's) | %s", r.lockShare(), r.samples, r.writesShare(), r.kinds())
}

func sum(rs []result) result {
	var t result
	t.byKind = map[string]int{}
	t.states = map[string]int{}
	for _, r := range rs {
		for k, n := range r.states {
			t.states[k] += n
		}
		t.orders += r.orders
		t.secs += r.secs
		t.samples += r.samples
		t.waiting += r.waiting
		t.writesWaiting += r.writesWaiting
	}
	return t
}

const createOrder = `mutation($c: ID!) { createOrder(input: {configuratorID: $c, price: 10, customerDetails: {name: "Load"}, configuratorSummary: {}}) { id } }`

// create runs conns clients creating orders for d, client i on
// configurator 1 + i%confs, and samples the lock waits meanwhile.
func (l *load) create(d time.Duration, conns, confs int) result {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var n atomic.Int64
	windows := make([]atomic.Int64, int(d/(10*time.Second))+1)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			vars := map[string]any{"c": fmt.Sprint(1 + i%confs)}
			for ctx.Err() == nil {
				if err := gqlpost.Post(l.client, l.base, l.token, createOrder, vars, nil); err != nil {
					if ctx.Err() != nil {
						return
					}
					log.Fatal(err)
				}
				if ctx.Err() != nil {
					return
				}
				n.Add(1)
				windows[int(time.Since(start)/(10*time.Second))].Add(1)
			}
		})
	}
	res := result{byKind: map[string]int{}, states: map[string]int{}}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			l.sample(&res)
		}
	}
	wg.Wait()
	res.orders = int(n.Load())
	res.secs = time.Since(start).Seconds()
	for i := range windows {
		if (i+1)*10 <= int(d.Seconds()) {
			res.windows = append(res.windows, int(windows[i].Load()))
		}
	}
	return res
}

// sample takes one sample of pg_stat_activity into res: whether some
// backend of the product's database waits on a heavyweight lock and, if
// so, which locks those are.
func (l *load) sample(res *result) {
	var waits int
	if err := l.db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`).Scan(&waits); err != nil {
		log.Fatal(err)
	}
	res.samples++
	states, err := l.db.Query(`SELECT coalesce(wait_event_type || ':' || wait_event, 'running'), count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid() GROUP BY 1`)
	if err != nil {
		log.Fatal(err)
	}
	for states.Next() {
		var state string
		var n int
		states.Scan(&state, &n)
		res.states[state] += n
	}
	states.Close()
	if waits == 0 {
		return
	}
	res.waiting++
	// What the waits are for: the lock's type, and for an object lock its
	// catalog (pg_database: NOTIFY's lock). And who waits: the order's
	// transaction, or the sender of notifications (NOTIFY's lock is shared
	// with every database; before the sender the writes' own COMMIT took it).
	rows, err := l.db.Query(`SELECT l.locktype || CASE WHEN l.locktype = 'object' THEN ':' || l.classid::regclass::text ELSE '' END
		|| ' (' || CASE WHEN a.query LIKE '%pg_notify%' THEN 'NOTIFY' WHEN a.query LIKE '%order_counts%' OR a.query ILIKE 'INSERT INTO "orders"%' THEN 'order insert'
		   WHEN a.query IN ('COMMIT', 'commit') THEN 'commit' ELSE left(a.query, 20) END || ')'
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE NOT l.granted AND a.datname = current_database()`)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	writes := false
	for rows.Next() {
		var kind string
		rows.Scan(&kind)
		res.byKind[kind]++
		writes = writes || !strings.HasSuffix(kind, "(NOTIFY)")
	}
	if writes {
		res.writesWaiting++
	}
}

func (l *load) get(path string, v any) {
	req, _ := http.NewRequest(http.MethodGet, l.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+l.token)
	res, err := l.client.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		log.Fatalf("GET %s: %d %s", path, res.StatusCode, raw)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			log.Fatalf("GET %s: %v", path, err)
		}
	}
}

// quantile is the q-quantile of xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}
