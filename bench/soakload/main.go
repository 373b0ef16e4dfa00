// Command soakload drives the compressed year of bench/soak.sh (issue 42)
// against a running server on PostgreSQL: order creations with an
// Idempotency-Key (a tenth of them sent twice, which must replay) and
// order updates at a steady rate, with two webhook endpoints active (one
// answers at once, one fails half of its attempts, so retries happen);
// every -every it samples the tables' rows and sizes and the server's
// RSS, goroutines, open files and database connections, measures W2
// (../shared/bench: a material by id, with wrk) after the warm-up and at
// the end, and prints a table and a verdict (exit status 1 when it fails).
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/configurator/catalogue/bench/internal/gqlpost"
)

// tables are the tables sampled; orders grows by design (every creation
// stays) and is shown, not judged.
var tables = []string{"events", "webhook_deliveries", "idempotency_keys", "river_job", "orders"}

// judged says which tables must plateau.
var judged = map[string]bool{"events": true, "webhook_deliveries": true, "idempotency_keys": true, "river_job": true}

type options struct {
	base, token, dash, dbURL, wrkLua string
	pid                              int
	// pgPID is PostgreSQL's postmaster (0: not on this machine): W2's
	// measures then count its backends' CPU too.
	pgPID int
	// pprof is the server's PPROF_ADDR (empty: none) and profiles the
	// folder where each W2 measure's CPU profile is saved.
	pprof, profiles         string
	dur, every, warm, burst time.Duration
	creates, updates        float64
	tolPlateau, tolRSS      float64
	// autovacuum is the database's setting: without it no size plateaus.
	autovacuum bool
}

func main() {
	var o options
	flag.StringVar(&o.base, "base", "http://127.0.0.1:8080", "the server")
	flag.StringVar(&o.token, "token", "", "an Open API token of configurator 1")
	flag.StringVar(&o.dash, "dashboard", "", "a dashboard token of its owner")
	flag.StringVar(&o.dbURL, "db", "", "the server's database (postgres://...)")
	flag.StringVar(&o.wrkLua, "wrk-lua", "../shared/bench/workloads/wrk.lua", "the shared wrk driver")
	flag.IntVar(&o.pid, "pid", 0, "the server's process id")
	flag.IntVar(&o.pgPID, "pg-pid", 0, "PostgreSQL's postmaster process id, when it runs on this machine")
	flag.StringVar(&o.pprof, "pprof", "", "the server's PPROF_ADDR: a CPU profile of each W2 measure is saved in -profiles")
	flag.StringVar(&o.profiles, "profiles", ".", "folder of the W2 profiles (CPU: w2-start.pb.gz, w2-end.pb.gz, w2-after.pb.gz; heap: heap-start.pb.gz and so on)")
	flag.DurationVar(&o.dur, "d", 20*time.Minute, "how long the writes run")
	flag.DurationVar(&o.every, "every", 30*time.Second, "time between samples")
	flag.DurationVar(&o.warm, "warm", 0, "warm-up, excluded from the judgement (default: a quarter of -d)")
	flag.DurationVar(&o.burst, "burst", 5*time.Second, "length of one W2 burst (w2Bursts make a measure)")
	flag.Float64Var(&o.creates, "creates", 20, "order creations a second")
	flag.Float64Var(&o.updates, "updates", 10, "order updates a second")
	flag.Float64Var(&o.tolPlateau, "plateau", 0.10, "a table's last samples may exceed its post-warm-up max by this share")
	flag.Float64Var(&o.tolRSS, "rss", 0.25, "RSS at the end may exceed its post-warm-up value by this share")
	var refs []reference
	flag.Func("ref", "instead of the soak: W2 against -base and this server (NAME=URL=PID=TOKEN, an Open API token of its database) in turn; repeatable", func(v string) error {
		f := strings.SplitN(v, "=", 4)
		if len(f) != 4 {
			return fmt.Errorf("want NAME=URL=PID=TOKEN, got %q", v)
		}
		pid, err := strconv.Atoi(f[2])
		refs = append(refs, reference{name: f[0], base: f[1], pid: pid, token: f[3]})
		return err
	})
	flag.Parse()
	if len(refs) > 0 {
		compareRefs(o, refs)
		return
	}
	if o.warm == 0 {
		o.warm = o.dur / 4
	}
	db, err := sql.Open("pgx", o.dbURL)
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	var av string
	db.QueryRow("SHOW autovacuum").Scan(&av)
	o.autovacuum = av == "on"
	os.Exit(run(o, db))
}

// run is the soak: writes and webhooks for o.dur, samples every o.every.
func run(o options, db *sql.DB) int {
	fast, flaky := newReceiver(0), newReceiver(0.5)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	for _, r := range []*receiver{fast, flaky} {
		if err := gqlpost.Post(client, o.base, o.dash,
			`mutation($u: String!) { createWebhookEndpoint(input: {url: $u, eventTypes: ["order.created", "order.updated"]}) { endpoint { id } } }`,
			map[string]any{"u": r.url}, nil); err != nil {
			log.Fatal(err)
		}
	}
	w := &writer{o: o, client: client, codes: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), o.dur)
	defer cancel()
	go w.run(ctx)
	start := time.Now()
	var samples []sample
	var w2Start, w2End w2
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	// The last W2 is measured while the writes still run, as the first.
	endW2 := time.After(o.dur - w2Bursts*o.burst - 2*time.Second)
sampling:
	for {
		s := takeSample(o, db, time.Since(start), w)
		samples = append(samples, s)
		printSample(s, len(samples) == 1)
		if w2Start.p99 == 0 && s.at >= o.warm {
			w2Start = measureW2(o, "start")
			fmt.Printf("W2 after the warm-up: %s\n", w2Start)
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		case <-endW2:
			// The last sample comes before the last W2, whose
			// connections and load it would otherwise count; the
			// writes stop after it.
			s := takeSample(o, db, time.Since(start), w)
			samples = append(samples, s)
			printSample(s, false)
			w2End = measureW2(o, "end")
			fmt.Printf("W2 at the end: %s\n", w2End)
			cancel()
			break sampling
		}
	}
	w.wait()
	// Not judged: W2 once the writes have stopped, which tells what
	// the end's state costs W2 from what the writes beside it cost.
	time.Sleep(5 * time.Second)
	fmt.Printf("W2 after the writes stopped (not judged): %s\n", measureW2(o, "after"))
	fmt.Printf("\nwrites: %d creations (%d replays checked), %d updates; answers %v\n",
		w.created.Load(), w.replays.Load(), w.updated.Load(), w.codesSeen())
	fmt.Printf("webhooks: fast receiver %d, flaky receiver %d (%d answered 500)\n", fast.got.Load(), flaky.got.Load(), flaky.failed.Load())
	return verdict(o, samples, w2Start, w2End, w)
}

// receiver is a webhook endpoint on loopback that fails a share of its
// attempts with 500.
type receiver struct {
	url         string
	got, failed atomic.Int64
}

func newReceiver(fail float64) *receiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	r := &receiver{url: "http://" + ln.Addr().String() + "/hook"}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		r.got.Add(1)
		if rand.Float64() < fail {
			r.failed.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	return r
}

// writer sends the writes at a steady pace, each in a goroutine of its
// own (at most 32 at once: a slow server slows the pace rather than
// piling requests up).
type writer struct {
	o                         options
	client                    *http.Client
	created, updated, replays atomic.Int64
	firstID, lastID           atomic.Int64
	mu                        sync.Mutex
	codes                     map[string]int
	wg                        sync.WaitGroup
	seq                       atomic.Int64
}

func (w *writer) run(ctx context.Context) {
	sem := make(chan struct{}, 32)
	interval := time.Duration(float64(time.Second) / (w.o.creates + w.o.updates))
	t := time.NewTicker(interval)
	defer t.Stop()
	share := w.o.creates / (w.o.creates + w.o.updates)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		create := rand.Float64() < share || w.lastID.Load() == 0
		w.wg.Go(func() {
			defer func() { <-sem }()
			if create {
				w.create()
			} else {
				w.update()
			}
		})
	}
}

func (w *writer) wait() { w.wg.Wait() }

// note counts an answer by method and status.
func (w *writer) note(what string, code int) {
	w.mu.Lock()
	w.codes[fmt.Sprintf("%s %d", what, code)]++
	w.mu.Unlock()
}

func (w *writer) codesSeen() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.codes))
	for k := range w.codes {
		keys = append(keys, fmt.Sprintf("%s: %d", k, w.codes[k]))
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// create posts an order over REST with a new Idempotency-Key; one in ten
// is sent again, whose answer must be the same order, replayed.
func (w *writer) create() {
	n := w.seq.Add(1)
	key := fmt.Sprintf("soak-%d-%d", os.Getpid(), n)
	id, code, replayed := w.postOrder(key, n)
	w.note("POST /orders", code)
	if code != http.StatusCreated {
		return
	}
	w.created.Add(1)
	w.firstID.CompareAndSwap(0, int64(id))
	w.lastID.Store(int64(id))
	if n%10 != 0 {
		return
	}
	again, code, replayed := w.postOrder(key, n)
	w.note("POST /orders (retry)", code)
	if again != id || !replayed {
		w.note(fmt.Sprintf("replay of %d gave %d, replayed %v:", id, again, replayed), code)
		return
	}
	w.replays.Add(1)
}

func (w *writer) postOrder(key string, n int64) (id, code int, replayed bool) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("configurator_id", "1")
	mw.WriteField("price", strconv.FormatInt(100+n%900, 10))
	mw.WriteField("customer_details", fmt.Sprintf(`{"name":"Soak %d"}`, n))
	mw.WriteField("configurator_summary", `{"Frame":"Grand"}`)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, w.o.base+"/api/open-api/v1/orders", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+w.o.token)
	req.Header.Set("Idempotency-Key", key)
	res, err := w.client.Do(req)
	if err != nil {
		return 0, 0, false
	}
	defer res.Body.Close()
	var o struct{ ID int }
	json.NewDecoder(res.Body).Decode(&o)
	return o.ID, res.StatusCode, res.Header.Get("Idempotent-Replayed") == "true"
}

// update moves one of the recent orders to another status (one of the
// last 50 this run created: before the first creation there is none, and
// an id before the first was not this owner's, answered 404).
func (w *writer) update() {
	last := w.lastID.Load()
	if last == 0 {
		return
	}
	id := max(last-rand.Int64N(50), w.firstID.Load())
	body := fmt.Sprintf(`{"status":"step-%d"}`, rand.IntN(1000))
	req, _ := http.NewRequest(http.MethodPatch, fmt.Sprintf("%s/api/open-api/v1/orders/%d", w.o.base, id), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+w.o.dash) // an Open API token may not update orders
	res, err := w.client.Do(req)
	if err != nil {
		w.note("PATCH /orders/{id} error", 0)
		return
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	w.note("PATCH /orders/{id}", res.StatusCode)
	if res.StatusCode == http.StatusOK {
		w.updated.Add(1)
	}
}
