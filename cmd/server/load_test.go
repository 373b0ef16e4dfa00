package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// The reads of the load: REST lists and by-id reads, and a GraphQL query
// with nested edges.
const loadQuery = `{ ordersPage(perPage: 10) { pagination { total lastPage } data { id price configurator { id name } } } materials(first: 5) { totalCount edges { node { id name category { title } } } } }`

// loadRequest is request j of client i in the load's mix: 3 in 10 REST
// order pages, 1 a material page, 1 an order by id, 3 GraphQL queries and
// 2 order creations with an Idempotency-Key (one per transport). It
// returns the request and the status that answers it.
func loadRequest(base, token string, ids []int, i, j int) (*http.Request, int, string) {
	key := fmt.Sprintf("load-%03d-%03d", i, j)
	order := orderReq{configurator: 1, price: "19.5", details: fmt.Sprintf(`{"name":"Load","key":%q}`, key)}
	var req *http.Request
	switch (i + j) % 10 {
	case 0, 1, 2:
		req = mustRequest(http.MethodGet, base+"/api/open-api/v1/orders?per_page=15&order_by=price&order=desc")
	case 3:
		req = mustRequest(http.MethodGet, base+"/api/open-api/v1/materials?per_page=10")
	case 4:
		req = mustRequest(http.MethodGet, fmt.Sprintf("%s/api/open-api/v1/orders/%d", base, ids[(i*7+j)%len(ids)]))
	case 5, 6, 7:
		req = mustRequest(http.MethodGet, base+"/graphql?query="+url.QueryEscape(loadQuery))
	case 8:
		return order.rest(base, token, key), http.StatusCreated, "rest order"
	default:
		return order.graphql(base, token, key), http.StatusOK, "graphql order"
	}
	kind := "rest read"
	if strings.HasPrefix(req.URL.Path, "/graphql") {
		kind = "graphql read"
	}
	return withAuth(req, token, ""), http.StatusOK, kind
}

// orderIDs lists the ids of the orders the token sees.
func orderIDs(t *testing.T, base, token string) []int {
	t.Helper()
	a := send(t, http.DefaultClient, withAuth(mustRequest(http.MethodGet, base+"/api/open-api/v1/orders?per_page=-1"), token, ""))
	var page struct {
		Data []struct {
			ID int `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(a.body), &page); err != nil || len(page.Data) == 0 {
		t.Fatalf("GET /orders: %d %s", a.status, a.body)
	}
	ids := make([]int, len(page.Data))
	for i, o := range page.Data {
		ids[i] = o.ID
	}
	return ids
}

// judge reads the answer of a load request: nil when it has the wanted
// status and a complete JSON body without GraphQL errors.
func judge(res *http.Response, err error, want int) error {
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("%d, body cut off: %v", res.StatusCode, err)
	}
	var body struct {
		Errors json.RawMessage `json:"errors"`
	}
	if res.StatusCode != want || json.Unmarshal(raw, &body) != nil && !json.Valid(raw) || len(body.Errors) > 0 && res.Request.URL.Path == "/graphql" {
		return fmt.Errorf("%d %s", res.StatusCode, tail(string(raw), 300))
	}
	return nil
}

// TestLoad is the bounded load test: a few hundred concurrent clients on
// loopback send a mix of REST and GraphQL reads and order creations to
// the real binary, on each database. Every answer must be right (no
// errors, no timeouts); the latency percentiles are logged.
func TestLoad(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			env := map[string]string{"DATABASE_URL": b.URL(t), "DEMO": "true"}
			p := startBinary(t, env)
			ids := orderIDs(t, p.base, p.token)
			const clients, perClient = 300, 10
			client := loadClient(clients, 30*time.Second)
			type result struct {
				kind    string
				latency time.Duration
				err     error
			}
			results := make([]result, 0, clients*perClient)
			var mu sync.Mutex
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for j := range perClient {
						req, want, kind := loadRequest(p.base, p.token, ids, i, j)
						t0 := time.Now()
						res, err := client.Do(req)
						err = judge(res, err, want)
						r := result{kind: kind, latency: time.Since(t0), err: err}
						mu.Lock()
						results = append(results, r)
						mu.Unlock()
					}
				}()
			}
			t0 := time.Now()
			close(start)
			wg.Wait()
			elapsed := time.Since(t0)

			latencies := make([]time.Duration, len(results))
			kinds := map[string]int{}
			failed := 0
			for i, r := range results {
				latencies[i] = r.latency
				kinds[r.kind]++
				if r.err != nil {
					failed++
					if failed <= 10 {
						t.Errorf("%s: %v", r.kind, r.err)
					}
				}
			}
			slices.Sort(latencies)
			pct := func(p float64) time.Duration {
				return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))].Round(100 * time.Microsecond)
			}
			t.Logf("%d clients, %d requests (%v) in %s, %.0f requests/s: p50 %s, p90 %s, p99 %s, max %s; %d failed",
				clients, len(results), kinds, elapsed.Round(time.Millisecond), float64(len(results))/elapsed.Seconds(),
				pct(0.50), pct(0.90), pct(0.99), latencies[len(latencies)-1].Round(100*time.Microsecond), failed)

			// Every creation made exactly one order.
			stored := ordersByKey(t, env["DATABASE_URL"])
			if want := kinds["rest order"] + kinds["graphql order"]; len(stored) != want {
				t.Errorf("%d order keys stored; want %d", len(stored), want)
			}
			for k, ids := range stored {
				if len(ids) != 1 {
					t.Errorf("key %s: orders %v; want one", k, ids)
				}
			}
		})
	}
}

// TestSIGTERMUnderLoad: SIGTERM while clients keep sending finishes every
// request that started before it. Order creations whose handlers are
// reading their bodies when the signal arrives (the server has answered
// their Expect: 100-continue) complete with 201 after shutdown began;
// the load's requests get complete, correct answers until the listener
// closes, then only connection errors; the process exits 0, and every
// order it answered 201 is in the database.
func TestSIGTERMUnderLoad(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			env := map[string]string{"DATABASE_URL": b.URL(t), "DEMO": "true"}
			p := startBinary(t, env)
			ids := orderIDs(t, p.base, p.token)
			addr := strings.TrimPrefix(p.base, "http://")

			// The load: workers loop over the mix until the server is gone.
			const workers = 16
			client := loadClient(workers, 30*time.Second)
			var sigterm atomic.Int64 // UnixNano of the signal, 0 before
			var answered, refused atomic.Int64
			var mu sync.Mutex
			var failures []string
			created := map[string]bool{}
			var wg sync.WaitGroup
			for i := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := 0; ; j++ {
						req, want, kind := loadRequest(p.base, p.token, ids, i, j)
						sent := time.Now().UnixNano()
						res, err := client.Do(req)
						if err != nil {
							if s := sigterm.Load(); s == 0 || sent < s-int64(50*time.Millisecond) {
								mu.Lock()
								failures = append(failures, fmt.Sprintf("%s before SIGTERM: %v", kind, err))
								mu.Unlock()
							}
							refused.Add(1)
							return
						}
						if err := judge(res, nil, want); err != nil {
							mu.Lock()
							failures = append(failures, fmt.Sprintf("%s: %v", kind, err))
							mu.Unlock()
							return
						}
						answered.Add(1)
						if strings.HasSuffix(kind, "order") {
							mu.Lock()
							created[req.Header.Get("Idempotency-Key")] = true
							mu.Unlock()
						}
					}
				}()
			}

			// Order creations in flight: headers sent, the handler
			// reading the body (it asked for it with 100 Continue).
			type inflight struct {
				conn net.Conn
				r    *bufio.Reader
				body []byte
				key  string
				want int
			}
			var slow []inflight
			for i := range 4 {
				key := fmt.Sprintf("inflight-%d", i)
				o := orderReq{configurator: 1, price: "42", details: fmt.Sprintf(`{"name":"In flight","key":%q}`, key), snapshot: testkit.PNG(8, 8, uint8(i))}
				req, want := o.rest(p.base, p.token, key), http.StatusCreated
				if i%2 == 1 {
					req, want = o.graphql(p.base, p.token, key), http.StatusOK
				}
				body, _ := io.ReadAll(req.Body)
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nIdempotency-Key: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
					req.URL.Path, addr, req.Header.Get("Authorization"), key, req.Header.Get("Content-Type"), len(body))
				r := bufio.NewReader(conn)
				line, err := r.ReadString('\n')
				if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 Continue") {
					t.Fatalf("in-flight order %d: %q, %v; want 100 Continue", i, line, err)
				}
				r.ReadString('\n') // the blank line after it
				slow = append(slow, inflight{conn: conn, r: r, body: body, key: key, want: want})
			}

			time.Sleep(300 * time.Millisecond) // the load runs beside them
			sigterm.Store(time.Now().UnixNano())
			p.sigterm(t)
			for !strings.Contains(p.stderr.String(), `msg="shutting down"`) {
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Error("the server still accepts connections after SIGTERM")
			}
			for i, s := range slow {
				s.conn.Write(s.body)
				res, err := http.ReadResponse(s.r, nil)
				if err := judge(res, err, s.want); err != nil {
					t.Errorf("in-flight order %d, finished after shutdown began: %v", i, err)
					continue
				}
				created[s.key] = true
			}
			wg.Wait()
			if err := p.wait(t, 45*time.Second); err != nil {
				t.Errorf("exit after SIGTERM: %v; want 0", err)
			}
			for _, f := range failures {
				t.Error(f)
			}
			t.Logf("%d answers to the load, %d workers stopped by the closed listener, %d orders in flight finished after SIGTERM",
				answered.Load(), refused.Load(), len(slow))

			stored := ordersByKey(t, env["DATABASE_URL"])
			for k := range created {
				if len(stored[k]) != 1 {
					t.Errorf("order %s answered 201: %d in the database; want 1", k, len(stored[k]))
				}
			}
			if len(stored) != len(created) {
				t.Errorf("%d order keys stored, %d answered; want equal", len(stored), len(created))
			}
		})
	}
}
