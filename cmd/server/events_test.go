package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// subscribeSSE opens a subscription over GraphQL over Server-Sent Events
// and returns the data of each event as it arrives; the stream closes
// when the test ends. It returns once the server has answered (the
// subscription is registered before the answer's first bytes).
func subscribeSSE(t *testing.T, base, token, query string) <-chan json.RawMessage {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("subscription: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	out := make(chan json.RawMessage, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- json.RawMessage(data)
			}
		}
	}()
	// gqlgen registers the subscription before it flushes the stream's
	// first bytes; give the hub a moment all the same.
	time.Sleep(100 * time.Millisecond)
	return out
}

// graphqlPost runs a GraphQL operation and decodes its data into v,
// failing on any error.
func graphqlPost(t *testing.T, base, token, query string, vars map[string]any, v any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []any
	}
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Errors) > 0 || res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", query, res.StatusCode, raw)
	}
	if v != nil {
		json.Unmarshal(r.Data, v)
	}
}

// within waits up to d for the next event on ch and returns it.
func within(t *testing.T, ch <-chan json.RawMessage, d time.Duration, what string) json.RawMessage {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		return e
	case <-time.After(d):
		t.Fatalf("%s: nothing within %v", what, d)
	}
	return nil
}

// testSubscriptionAcross: a subscription on one replica receives, within
// a second, a write made through another.
func testSubscriptionAcross(t *testing.T, subscriber, writer, token string) {
	t.Helper()
	events := subscribeSSE(t, subscriber, token, `subscription { events(types: ["order.created"]) { type order { id price } } }`)
	var made struct{ CreateOrder struct{ ID string } }
	start := time.Now()
	graphqlPost(t, writer, token, `mutation { createOrder(input: {configuratorID: 1, price: 12.5, customerDetails: {name: "Ada"}, configuratorSummary: {}}) { id } }`, nil, &made)
	e := within(t, events, time.Second, "the order created on the other replica")
	var got struct {
		Data struct {
			Events struct {
				Type  string
				Order struct{ ID string }
			}
		}
	}
	json.Unmarshal(e, &got)
	if got.Data.Events.Type != "order.created" || got.Data.Events.Order.ID != made.CreateOrder.ID {
		t.Errorf("the subscriber got %s; want order.created of order %s", e, made.CreateOrder.ID)
	}
	t.Logf("received %v after the write returned", time.Since(start))
}

// hookReceiver counts the webhooks it receives by webhook-id; while down
// it is not listening at all.
type hookReceiver struct {
	ln   net.Listener
	srv  *http.Server
	addr string
	mu   sync.Mutex
	got  map[string]int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &hookReceiver{ln: ln, addr: ln.Addr().String(), got: map[string]int{}}
	r.up(t)
	t.Cleanup(func() { r.srv.Close() })
	return r
}

func (r *hookReceiver) up(t *testing.T) {
	if r.ln == nil {
		ln, err := net.Listen("tcp", r.addr)
		if err != nil {
			t.Fatal(err)
		}
		r.ln = ln
	}
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got[req.Header.Get("webhook-id")]++
		r.mu.Unlock()
	})}
	go r.srv.Serve(r.ln)
}

func (r *hookReceiver) down() {
	r.srv.Close()
	r.ln = nil
}

func (r *hookReceiver) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.got {
		out[k] = v
	}
	return out
}

// killable is a server process that the test kills with SIGKILL.
type killable struct {
	cmd    *exec.Cmd
	base   string
	stderr *testkit.SyncBuffer
}

func startKillable(t *testing.T, bin string, env map[string]string) *killable {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = t.TempDir()
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	k := &killable{cmd: cmd, stderr: &testkit.SyncBuffer{}}
	cmd.Stderr, cmd.Stdout = k.stderr, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.kill)
	deadline := time.Now().Add(60 * time.Second)
	for k.base == "" {
		if m := listeningRE.FindStringSubmatch(k.stderr.String()); m != nil {
			k.base = "http://" + m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not listen:\n%s", k.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitReady(t, k.base)
	return k
}

func (k *killable) kill() {
	if k.cmd.ProcessState == nil {
		k.cmd.Process.Kill()
		k.cmd.Wait()
	}
}

// TestEventsAcrossProcesses runs the binary: on PostgreSQL two replicas
// share the events (a subscription on one hears a write through the
// other within a second; each event reaches a webhook receiver once,
// whichever replica works it), and on both databases a process killed
// after the write delivers its webhook after a restart.
func TestEventsAcrossProcesses(t *testing.T) {
	bin := binary(t)
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			dbURL := b.URL(t)
			env := map[string]string{
				"DATABASE_URL": dbURL, "DEMO": "false", "STORAGE_URL": "file://" + t.TempDir(),
				// The first retry waits 3 s, so that the kill below comes
				// between two attempts and not during one (a job cut short
				// is rescued only after RescueStuckJobsAfter, 30 s, plus the
				// rescuer's own interval).
				"WEBHOOK_ALLOW_PRIVATE": "true", "WEBHOOK_RETRY_SCHEDULE": "3s,1s,1s,1s,1s,1s,1s,1s,1s,1s",
			}
			if out, err := exec.Command(bin, "seed", "--demo", "--database-url", dbURL).CombinedOutput(); err != nil {
				t.Fatalf("seed: %v\n%s", err, out)
			}
			dash := cliToken(t, bin, dbURL, "--dashboard", "--owner", "1")
			open := cliToken(t, bin, dbURL, "--configurator", "1")
			rcv := newHookReceiver(t)
			a := startKillable(t, bin, env)
			graphqlPost(t, a.base, dash, `mutation($u: String!) { createWebhookEndpoint(input: {url: $u, eventTypes: ["order.created"]}) { secret } }`,
				map[string]any{"u": "http://" + rcv.addr + "/hook"}, nil)
			const createOrder = `mutation { createOrder(input: {configuratorID: 1, price: 1, customerDetails: {}, configuratorSummary: {}}) { id } }`
			orders := 0
			if b.Name == "postgres" {
				bRep := startKillable(t, bin, env)
				t.Run("a subscription hears a write on another replica", func(t *testing.T) {
					testSubscriptionAcross(t, a.base, bRep.base, open)
				})
				orders++
				for i := range 20 {
					graphqlPost(t, []string{a.base, bRep.base}[i%2], open, createOrder, nil, nil)
					orders++
				}
				waitCounts(t, rcv, orders)
				// The metrics of the two replicas count every delivery once
				// and show the queue. A replica counts an attempt once the
				// answer is in and its success once recorded, both after
				// the receiver has the webhook: they are waited for.
				var succeeded, attempts float64
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
					succeeded, attempts = 0, 0
					for _, base := range []string{a.base, bRep.base} {
						m := scrape(t, base)
						succeeded += m[`webhook_deliveries_total{outcome="succeeded"}`]
						attempts += m["webhook_attempt_duration_seconds_count"]
						if _, ok := m["webhook_queue_depth"]; !ok {
							t.Errorf("%s/metrics has no webhook_queue_depth", base)
						}
					}
					if succeeded >= float64(orders) && attempts >= float64(orders) || time.Now().After(deadline) {
						break
					}
				}
				if succeeded != float64(orders) || attempts != float64(orders) {
					t.Errorf("the replicas count %v deliveries succeeded in %v attempts; want %d of each", succeeded, attempts, orders)
				}
				bRep.kill()
			}
			// The receiver goes down, a write is made, and the process is
			// killed before the retry: the next process delivers it.
			rcv.down()
			graphqlPost(t, a.base, open, createOrder, nil, nil)
			orders++
			waitFailedAttempt(t, dbURL)
			a.kill()
			rcv.up(t)
			startKillable(t, bin, env)
			waitCounts(t, rcv, orders)
			for id, n := range rcv.counts() {
				if n != 1 {
					t.Errorf("%s arrived %d times; want once", id, n)
				}
			}
		})
	}
}

// waitCounts waits up to 45 s (a job cut short by a kill is rescued after
// 30) until the receiver has n distinct webhook-ids.
func waitCounts(t *testing.T, rcv *hookReceiver, n int) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for len(rcv.counts()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d webhooks arrived", len(rcv.counts()), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFailedAttempt waits up to 10 s until a pending delivery has
// recorded a failed attempt (its retry is then scheduled in the same
// transaction): the process is then between two attempts (a fixed sleep
// was not enough on a loaded machine, where the kill sometimes came
// during an attempt and left its job to the 30 s rescue).
func waitFailedAttempt(t *testing.T, dbURL string) {
	t.Helper()
	waitRows(t, dbURL, "a delivery to record a failed attempt", `SELECT count(*) FROM webhook_deliveries WHERE attempts >= 1 AND status = 'PENDING'`)
}

// cliToken creates a token with the CLI and returns it.
func cliToken(t *testing.T, bin, dbURL string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string{"token", "create"}, args...), "--database-url", dbURL)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("token create: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// testPlaygroundSubscription runs a subscription in the playground, in
// headless Chromium: the order created after it starts shows in the
// result pane.
func testPlaygroundSubscription(t *testing.T, base, token string) {
	t.Run("subscription in the playground", func(t *testing.T) {
		bctx := testkit.Browser(t)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(500 * time.Millisecond):
				}
				graphqlPost(t, base, token, `mutation { createOrder(input: {configuratorID: 1, price: 3, customerDetails: {}, configuratorSummary: {}}) { id } }`, nil, nil)
			}
		}()
		result := testkit.RunPlaygroundQuery(t, bctx, base+"/playground#token="+token,
			`subscription { events(types: ["order.created"]) { type order { price } } }`)
		close(stop)
		<-done
		if !strings.Contains(result, `"order.created"`) || !strings.Contains(result, `"price": 3`) {
			t.Errorf("playground subscription result:\n%s", result)
		}
	})
}

// TestQueueThatCannotStartStopsTheServer: when the webhook queue cannot
// start (here its database is gone by then), starting the events fails,
// naming the queue, and serve returns that error instead of serving
// writes whose webhooks would never be sent.
func TestQueueThatCannotStartStopsTheServer(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c := dbtest.Open(t, url)
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			p := newEvents(c, &config.Config{}, newMetrics(c, log), log)
			if p.queue == nil {
				t.Fatal("no webhook queue")
			}
			database.Pool(c).Close()
			stop, err := p.start(context.Background(), nil, log)
			if err == nil {
				stop()
				t.Fatal("the events started without a database")
			}
			if !strings.Contains(err.Error(), "webhook queue cannot start") {
				t.Errorf("error %q; want it to name the webhook queue", err)
			}
		})
	}
}
