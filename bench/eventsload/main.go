// Command eventsload measures what events cost a running server
// (bench/events.sh starts it): order creation throughput over GraphQL
// with no webhook endpoint and with one active endpoint, in alternating
// rounds, and the delivery lag of each webhook, from the moment the
// createOrder answer reached the client to the moment the receiver (in
// this process, on loopback) got the webhook.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/configurator/catalogue/bench/internal/gqlpost"
)

const createOrder = `mutation { createOrder(input: {configuratorID: 1, price: 10, customerDetails: {name: "Load"}, configuratorSummary: {}}) { id } }`

func main() {
	base := flag.String("base", "http://127.0.0.1:8080", "the server")
	open := flag.String("token", "", "an Open API token of configurator 1")
	dash := flag.String("dashboard", "", "a dashboard token of its owner")
	dur := flag.Duration("d", 10*time.Second, "duration of one round")
	rounds := flag.Int("r", 2, "rounds of each setup")
	conns := flag.Int("c", 8, "concurrent clients")
	flag.Parse()

	rcv := newReceiver()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns}}
	var endpointID string
	fmt.Println("| round | setup | orders/s | webhooks received | lag p50 ms | lag p99 ms |")
	fmt.Println("|---:|---|---:|---:|---:|---:|")
	// Order creation slows down as the tables grow (a fresh database
	// takes the first rounds), so the setups alternate A B B A A B ...:
	// each meets the growth as often as the other, and the totals compare.
	var orders [2]int
	for r := 1; r <= *rounds; r++ {
		setups := []int{0, 1} // orders' index: 1 with one active endpoint
		if r%2 == 0 {
			setups = []int{1, 0}
		}
		for _, s := range setups {
			active := s == 1
			if active {
				var out struct {
					CreateWebhookEndpoint struct{ Endpoint struct{ ID string } }
				}
				gqlpost.Post(client, *base, *dash, `mutation($u: String!) { createWebhookEndpoint(input: {url: $u, eventTypes: ["order.created"]}) { endpoint { id } } }`,
					map[string]any{"u": rcv.url}, &out)
				endpointID = out.CreateWebhookEndpoint.Endpoint.ID
			}
			rcv.reset()
			n, answered := load(client, *base, *open, *dur, *conns)
			setup, lag := "no endpoint", "– | – | –"
			if active {
				setup = "one active endpoint"
				rcv.wait(answered, 30*time.Second)
				p50, p99, got := rcv.lags(answered)
				lag = fmt.Sprintf("%d of %d | %.1f | %.1f", got, n, p50, p99)
				gqlpost.Post(client, *base, *dash, `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }`, map[string]any{"id": endpointID}, nil)
			}
			fmt.Printf("| %d | %s | %.0f | %s |\n", r, setup, float64(n)/dur.Seconds(), lag)
			orders[s] += n
		}
	}
	fmt.Printf("\nover %d rounds: %.0f orders/s with no endpoint, %.0f with one active endpoint (%.1f%% fewer)\n",
		*rounds, float64(orders[0])/(float64(*rounds)*dur.Seconds()), float64(orders[1])/(float64(*rounds)*dur.Seconds()),
		100*(1-float64(orders[1])/float64(orders[0])))
}

// load creates orders with conns clients for d and returns how many were
// created and when each answer arrived, by order id.
func load(client *http.Client, base, token string, d time.Duration, conns int) (int, map[string]time.Time) {
	var mu sync.Mutex
	answered := map[string]time.Time{}
	var n atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				var out struct{ CreateOrder struct{ ID string } }
				if err := gqlpost.Post(client, base, token, createOrder, nil, &out); err != nil {
					log.Fatal(err)
				}
				at := time.Now()
				if ctx.Err() != nil {
					return
				}
				n.Add(1)
				mu.Lock()
				answered[out.CreateOrder.ID] = at
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return int(n.Load()), answered
}

// receiver records when each order's webhook arrived.
type receiver struct {
	url  string
	mu   sync.Mutex
	seen map[string]time.Time
}

func newReceiver() *receiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	r := &receiver{url: "http://" + ln.Addr().String() + "/hook", seen: map[string]time.Time{}}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		var p struct {
			Data struct{ ID int }
		}
		json.NewDecoder(req.Body).Decode(&p)
		r.mu.Lock()
		r.seen[fmt.Sprint(p.Data.ID)] = at
		r.mu.Unlock()
	}))
	return r
}

func (r *receiver) reset() {
	r.mu.Lock()
	r.seen = map[string]time.Time{}
	r.mu.Unlock()
}

// wait waits until the webhook of every answered order arrived or d
// passed. It checks the orders themselves, not a count: orders answered
// after the round's end are not in answered, but their webhooks arrive too.
func (r *receiver) wait(answered map[string]time.Time, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		all := true
		for id := range answered {
			if _, ok := r.seen[id]; !ok {
				all = false
				break
			}
		}
		r.mu.Unlock()
		if all {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lags returns the p50 and p99 lag in milliseconds of the orders in
// answered, and how many of them arrived.
func (r *receiver) lags(answered map[string]time.Time) (p50, p99 float64, got int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ms []float64
	for id, at := range answered {
		if seen, ok := r.seen[id]; ok {
			ms = append(ms, float64(seen.Sub(at).Microseconds())/1000)
		}
	}
	if len(ms) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ms)
	return ms[len(ms)/2], ms[min(len(ms)-1, len(ms)*99/100)], len(ms)
}
