// Command restartload measures what a PostgreSQL restart costs the
// clients of a running server (bench/restart.sh starts both, issue 42
// item 5): clients send REST reads, REST order creations with an
// Idempotency-Key (retried with the same key until one is answered 201)
// and GraphQL queries and createOrder mutations, while a probe opens a
// connection to PostgreSQL every 20 ms; after -before it runs -restart
// (pg_ctl restart -m fast), goes on for -after, and prints how long
// PostgreSQL itself refused connections, how long clients got errors
// (first to last), which answers they got (whether each 503 had
// Retry-After, and any 500), how long after PostgreSQL's return the
// service answered 2xx again, and whether every created order's webhook
// arrived at the receiver (on loopback).
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
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/configurator/catalogue/bench/internal/gqlpost"
)

type options struct {
	base, token, dash, dbURL, restart string
	before, after, wait               time.Duration
	clients                           int
	idle                              bool
}

func main() {
	var o options
	flag.StringVar(&o.base, "base", "http://127.0.0.1:8080", "the server")
	flag.StringVar(&o.token, "token", "", "an Open API token of configurator 1")
	flag.StringVar(&o.dash, "dashboard", "", "a dashboard token of its owner")
	flag.StringVar(&o.dbURL, "db", "", "the server's PostgreSQL, for the probe")
	flag.StringVar(&o.restart, "restart", "", "the command that restarts PostgreSQL (sh -c)")
	flag.DurationVar(&o.before, "before", 5*time.Second, "load before the restart")
	flag.DurationVar(&o.after, "after", 10*time.Second, "load after the restart command returned")
	flag.DurationVar(&o.wait, "wait", 60*time.Second, "how long to wait for the webhooks at the end")
	flag.BoolVar(&o.idle, "idle", true, "then restart PostgreSQL with no load, and send a few requests 2 s after its return")
	flag.IntVar(&o.clients, "c", 8, "clients (a quarter each: REST reads, REST creations, GraphQL queries, GraphQL creations)")
	flag.Parse()
	os.Exit(run(o))
}

// event is one answer a client got.
type event struct {
	at      time.Time
	kind    string
	status  int // 0: no answer (a transport error)
	retryOK bool
	gqlErr  bool // a GraphQL answer with errors
}

type recorder struct {
	mu     sync.Mutex
	events []event
	orders map[int]bool // orders answered as created
}

func (r *recorder) add(e event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) created(id int) {
	r.mu.Lock()
	r.orders[id] = true
	r.mu.Unlock()
}

func run(o options) int {
	rcv := newReceiver()
	client := &http.Client{Timeout: 40 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: o.clients}}
	var ep struct {
		CreateWebhookEndpoint struct{ Endpoint struct{ ID string } }
	}
	if err := gqlpost.Post(client, o.base, o.dash,
		`mutation($u: String!) { createWebhookEndpoint(input: {url: $u, eventTypes: ["order.created"]}) { endpoint { id } } }`,
		map[string]any{"u": rcv.url}, &ep); err != nil {
		log.Fatal(err)
	}
	// The next round has a receiver of its own.
	defer gqlpost.Post(client, o.base, o.dash, `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }`,
		map[string]any{"id": ep.CreateWebhookEndpoint.Endpoint.ID}, nil)
	rec := &recorder{orders: map[int]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range o.clients {
		wg.Go(func() { clientLoop(ctx, o, client, rec, i) })
	}
	pr := &probe{}
	pctx, pcancel := context.WithCancel(context.Background())
	go pr.run(pctx, o.dbURL)
	time.Sleep(o.before)
	cmdStart := time.Now()
	out, err := exec.Command("sh", "-c", o.restart).CombinedOutput()
	cmdEnd := time.Now()
	if err != nil {
		log.Printf("restart command: %v: %s", err, out)
	}
	time.Sleep(o.after)
	cancel()
	wg.Wait()
	pcancel()
	status := report(o, rec, pr, rcv, cmdStart, cmdEnd)
	if o.idle {
		status = max(status, idleRestart(o, client))
	}
	return status
}

// clientLoop sends one kind of request after another until ctx ends.
func clientLoop(ctx context.Context, o options, client *http.Client, rec *recorder, i int) {
	kinds := []string{"REST read", "REST create", "GraphQL query", "GraphQL create"}
	kind := kinds[i%len(kinds)]
	for n := 0; ctx.Err() == nil; n++ {
		switch kind {
		case "REST read":
			rec.add(send(client, kind, get(o, fmt.Sprintf("/api/open-api/v1/orders?per_page=5&page=%d", 1+n%3))))
		case "GraphQL query":
			rec.add(send(client, kind, gql(o, `query { ordersPage(page: 1, perPage: 5) { data { id price } } }`, nil)))
		default:
			create(ctx, o, client, rec, kind, fmt.Sprintf("restart-%d-%d-%d", os.Getpid(), i, n))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// create sends one order creation, and again with the same key after
// every failure (as a client should: 503 says retry), until it is
// answered or the load ends; an order answered is recorded.
func create(ctx context.Context, o options, client *http.Client, rec *recorder, kind, key string) {
	for ctx.Err() == nil {
		var req *http.Request
		if kind == "REST create" {
			req = restOrder(o, key)
		} else {
			req = gql(o, `mutation { createOrder(input: {configuratorID: 1, price: 10, customerDetails: {name: "Restart"}, configuratorSummary: {}}) { id } }`, nil)
		}
		req.Header.Set("Idempotency-Key", key)
		e, id := sendID(client, kind, req)
		rec.add(e)
		if id != 0 {
			rec.created(id)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func get(o options, path string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, o.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+o.token)
	return req
}

func gql(o options, query string, vars map[string]any) *http.Request {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, o.base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+o.token)
	return req
}

func restOrder(o options, key string) *http.Request {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("configurator_id", "1")
	mw.WriteField("price", "10")
	mw.WriteField("customer_details", `{"name":"Restart"}`)
	mw.WriteField("configurator_summary", `{}`)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, o.base+"/api/open-api/v1/orders", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+o.token)
	return req
}

func send(client *http.Client, kind string, req *http.Request) event {
	e, _ := sendID(client, kind, req)
	return e
}

// sendID sends req and returns its event and, for a creation answered
// with an order, the order's id.
func sendID(client *http.Client, kind string, req *http.Request) (event, int) {
	res, err := client.Do(req)
	e := event{at: time.Now(), kind: kind}
	if err != nil {
		return e, 0
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	e.status, e.retryOK = res.StatusCode, res.Header.Get("Retry-After") != ""
	var v struct {
		ID     int
		Data   struct{ CreateOrder struct{ ID string } }
		Errors []any
	}
	json.Unmarshal(raw, &v)
	e.gqlErr = strings.HasPrefix(kind, "GraphQL") && len(v.Errors) > 0
	e.at = time.Now()
	if !e.ok() {
		return e, 0
	}
	id := v.ID
	if v.Data.CreateOrder.ID != "" {
		fmt.Sscan(v.Data.CreateOrder.ID, &id)
	}
	if !strings.HasSuffix(kind, "create") {
		id = 0
	}
	return e, id
}

func (e event) ok() bool { return e.status >= 200 && e.status < 300 && !e.gqlErr }

// probe connects to PostgreSQL every 20 ms (a new connection each time,
// as the service's pool does after a restart) and notes when it failed.
type probe struct {
	mu                sync.Mutex
	firstFail, lastOK time.Time
	lastFail, backOK  time.Time
}

func (p *probe) run(ctx context.Context, url string) {
	for ctx.Err() == nil {
		db, err := sql.Open("pgx", url)
		if err == nil {
			c, cancel := context.WithTimeout(ctx, time.Second)
			err = db.PingContext(c)
			cancel()
			db.Close()
		}
		now := time.Now()
		p.mu.Lock()
		switch {
		case err != nil && ctx.Err() == nil:
			if p.firstFail.IsZero() {
				p.firstFail = now
			}
			p.lastFail = now
		case err == nil && !p.lastFail.IsZero() && p.backOK.IsZero():
			p.backOK = now
		}
		p.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
}

// receiver records the order ids of the webhooks that arrive.
type receiver struct {
	url  string
	mu   sync.Mutex
	seen map[int]int
}

func newReceiver() *receiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	r := &receiver{url: "http://" + ln.Addr().String() + "/hook", seen: map[int]int{}}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var p struct{ Data struct{ ID int } }
		json.NewDecoder(req.Body).Decode(&p)
		r.mu.Lock()
		r.seen[p.Data.ID]++
		r.mu.Unlock()
	}))
	return r
}

// missing is how many of orders have had no webhook yet.
func (r *receiver) missing(orders map[int]bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id := range orders {
		if r.seen[id] == 0 {
			n++
		}
	}
	return n
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func report(o options, rec *recorder, pr *probe, rcv *receiver, cmdStart, cmdEnd time.Time) int {
	sort.Slice(rec.events, func(i, j int) bool { return rec.events[i].at.Before(rec.events[j].at) })
	var firstBad, lastBad time.Time
	codes := map[string]int{}
	for _, e := range rec.events {
		if e.ok() {
			continue
		}
		if firstBad.IsZero() {
			firstBad = e.at
		}
		lastBad = e.at
		k := fmt.Sprintf("%s %d", e.kind, e.status)
		if e.gqlErr {
			k += " with errors"
		}
		if e.status == http.StatusServiceUnavailable && !e.retryOK {
			k += " WITHOUT Retry-After"
		}
		codes[k]++
	}
	var firstOKAfter time.Time
	for _, e := range rec.events {
		if e.ok() && e.at.After(lastBad) && !lastBad.IsZero() {
			firstOKAfter = e.at
			break
		}
	}
	fmt.Printf("requests: %d answers, %d orders created\n", len(rec.events), len(rec.orders))
	fmt.Printf("restart command (pg_ctl restart -m fast): %s\n", ms(cmdEnd.Sub(cmdStart)))
	if pr.firstFail.IsZero() {
		fmt.Println("PostgreSQL down: the probe never failed")
	} else {
		fmt.Printf("PostgreSQL down (probe, first refused to first accepted connection): %s, from %s after the command\n",
			ms(pr.backOK.Sub(pr.firstFail)), ms(pr.firstFail.Sub(cmdStart)))
	}
	if firstBad.IsZero() {
		fmt.Println("clients: no error")
	} else {
		fmt.Printf("clients got errors (first to last): %s, from %s after the command; first 2xx after the last error %s after it\n",
			ms(lastBad.Sub(firstBad)), ms(firstBad.Sub(cmdStart)), ms(firstOKAfter.Sub(lastBad)))
		if !pr.backOK.IsZero() {
			fmt.Printf("service back (last error) %s after PostgreSQL accepted connections again\n", ms(lastBad.Sub(pr.backOK)))
		}
	}
	return judge(o, codes, rec, rcv)
}

// judge prints the error answers and waits for the webhooks: a 500, a
// 503 without Retry-After, a transport error or a lost webhook fails.
func judge(o options, codes map[string]int, rec *recorder, rcv *receiver) int {
	keys := make([]string, 0, len(codes))
	for k, n := range codes {
		keys = append(keys, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(keys)
	fmt.Printf("error answers: %s\n", strings.Join(keys, ", "))
	deadline := time.Now().Add(o.wait)
	for rcv.missing(rec.orders) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	lost := rcv.missing(rec.orders)
	fmt.Printf("webhooks: %d of %d created orders' webhooks arrived (%d missing after %s)\n", len(rec.orders)-lost, len(rec.orders), lost, o.wait)
	bad := 0
	for k, n := range codes {
		if strings.Contains(k, " 500") || strings.Contains(k, "WITHOUT") || strings.Contains(k, " 0") {
			bad += n
		}
	}
	if bad > 0 || lost > 0 {
		fmt.Printf("FAIL: %d answers that were not 503 with Retry-After, %d webhooks lost\n", bad, lost)
		return 1
	}
	return 0
}

// idleRestart restarts PostgreSQL while no request runs, waits until it
// accepts connections and 2 s more (the pool's connections, broken by
// the restart, are then idle for longer than a second), and sends three
// requests of each kind one after the other: each should be answered 2xx
// at once, the restart having cost nothing once it is over.
func idleRestart(o options, client *http.Client) int {
	time.Sleep(2 * time.Second)
	if out, err := exec.Command("sh", "-c", o.restart).CombinedOutput(); err != nil {
		log.Printf("restart command: %v: %s", err, out)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if db, err := sql.Open("pgx", o.dbURL); err == nil {
			err = db.Ping()
			db.Close()
			if err == nil {
				break
			}
		}
	}
	time.Sleep(2 * time.Second)
	var bad []string
	n := 0
	for i := range 3 {
		for _, e := range []event{
			send(client, "REST read", get(o, "/api/open-api/v1/orders?per_page=5")),
			send(client, "GraphQL query", gql(o, `query { ordersPage(page: 1, perPage: 5) { data { id } } }`, nil)),
			func() event {
				req := restOrder(o, fmt.Sprintf("idle-%d-%d", os.Getpid(), i))
				req.Header.Set("Idempotency-Key", fmt.Sprintf("idle-%d-%d", os.Getpid(), i))
				return send(client, "REST create", req)
			}(),
		} {
			n++
			if !e.ok() {
				bad = append(bad, fmt.Sprintf("%s %d", e.kind, e.status))
			}
		}
	}
	fmt.Printf("idle restart: %d of %d requests 2 s after PostgreSQL's return answered 2xx; errors: %v\n", n-len(bad), n, bad)
	if len(bad) > 0 {
		return 1
	}
	return 0
}
