package edge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gate is a handler that records the order requests start in and how many
// run at once, and holds each until its channel is closed.
type gate struct {
	mu      sync.Mutex
	started []string
	running atomic.Int32
	most    atomic.Int32
	release map[string]chan struct{}
}

func newGate(names ...string) *gate {
	g := &gate{release: map[string]chan struct{}{}}
	for _, n := range names {
		g.release[n] = make(chan struct{})
	}
	return g
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("n")
	now := g.running.Add(1)
	for {
		most := g.most.Load()
		if now <= most || g.most.CompareAndSwap(most, now) {
			break
		}
	}
	g.mu.Lock()
	g.started = append(g.started, name)
	g.mu.Unlock()
	<-g.release[name]
	g.running.Add(-1)
	w.WriteHeader(http.StatusNoContent)
}

func (g *gate) order() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.started)
}

// serve starts a request named name through h and returns a channel that
// yields its recorded answer.
func serve(ctx context.Context, h http.Handler, name string, header ...string) <-chan *httptest.ResponseRecorder {
	done := make(chan *httptest.ResponseRecorder, 1)
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/?n="+name, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		done <- w
	}()
	return done
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestAdmitQueuesInArrivalOrder(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e"}
	g := newGate(names...)
	h := admitWithin(2, time.Hour)(g)
	var answers []<-chan *httptest.ResponseRecorder
	for _, n := range names {
		answers = append(answers, serve(context.Background(), h, n))
		// Each request reaches the queue before the next is sent.
		time.Sleep(30 * time.Millisecond)
	}
	if got := g.order(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("started %v with two places; want [a b], the rest queued", got)
	}
	for i, n := range names {
		close(g.release[n])
		if code := (<-answers[i]).Code; code != http.StatusNoContent {
			t.Fatalf("%s answered %d", n, code)
		}
		want := names[:min(i+3, len(names))]
		waitFor(t, "the next request in line", func() bool { return len(g.order()) == len(want) })
		if got := g.order(); !slices.Equal(got, want) {
			t.Fatalf("after %s finished, started %v; want %v (arrival order)", n, got, want)
		}
	}
	if most := g.most.Load(); most != 2 {
		t.Errorf("at most %d requests ran at once; want 2", most)
	}
}

func TestAdmitLetsTheNextInAfterHold(t *testing.T) {
	g := newGate("slow", "next")
	h := admitWithin(1, 20*time.Millisecond)(g)
	slow := serve(context.Background(), h, "slow")
	waitFor(t, "the slow request to start", func() bool { return len(g.order()) == 1 })
	next := serve(context.Background(), h, "next")
	// The slow request keeps running, yet gives up its place.
	waitFor(t, "the next request to start beside the slow one", func() bool { return len(g.order()) == 2 })
	close(g.release["next"])
	<-next
	close(g.release["slow"])
	<-slow
}

// taken returns a gate behind one place, which a request named first
// holds until its channel is closed (first answers on the channel).
func taken(t *testing.T, names ...string) (g *gate, h http.Handler, first <-chan *httptest.ResponseRecorder) {
	g = newGate(append(names, "first")...)
	h = admitWithin(1, time.Hour)(g)
	first = serve(context.Background(), h, "first")
	waitFor(t, "the first request to start", func() bool { return len(g.order()) == 1 })
	return g, h, first
}

func TestAdmitAnswers503WhenTheDeadlinePassesInTheQueue(t *testing.T) {
	g, h, first := taken(t, "late")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	w := <-serve(ctx, h, "late")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("a request whose deadline passed in the queue answered %d, Retry-After %q; want 503 with one", w.Code, w.Header().Get("Retry-After"))
	}
	if got := g.order(); !slices.Equal(got, []string{"first"}) {
		t.Errorf("started %v; the late request must not run", got)
	}
	close(g.release["first"])
	<-first
}

// TestAdmitQueuesWhateverTheHeaders: a request that says it opens a
// stream (Upgrade: websocket, Accept: text/event-stream) waits in the
// queue like any other: only the endpoint that knows it serves a
// subscription lets it go (Lift). With the only place taken, it answers
// 503 when its deadline passes in the queue, and never starts.
func TestAdmitQueuesWhateverTheHeaders(t *testing.T) {
	for _, header := range [][]string{{"Upgrade", "websocket"}, {"Accept", "text/event-stream"}} {
		g, h, first := taken(t, "stream")
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		answer := serve(ctx, h, "stream", header...)
		var w *httptest.ResponseRecorder
		waitFor(t, "the request to be answered or to start", func() bool {
			select {
			case w = <-answer:
				return true
			default:
				return slices.Contains(g.order(), "stream")
			}
		})
		cancel()
		if w == nil {
			t.Errorf("a request with %s: %s started while the only place was taken; want it queued", header[0], header[1])
			close(g.release["stream"])
			<-answer
		} else if w.Code != http.StatusServiceUnavailable {
			t.Errorf("a request with %s: %s whose deadline passed in the queue answered %d; want 503", header[0], header[1], w.Code)
		}
		close(g.release["first"])
		<-first
	}
}

// TestDeadlineWhateverTheHeaders: every request has the deadline,
// including those that say they open a stream; only Lift removes it.
func TestDeadlineWhateverTheHeaders(t *testing.T) {
	for _, header := range [][]string{nil, {"Upgrade", "websocket"}, {"Accept", "text/event-stream"}} {
		var has bool
		h := Deadline(time.Hour)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, has = r.Context().Deadline()
		}))
		r := httptest.NewRequest(http.MethodPost, "/api/open-api/v1/orders", nil)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if !has {
			t.Errorf("a request with %v has no deadline; want REQUEST_TIMEOUT's", header)
		}
	}
}

// TestLift: a stream lifted by its endpoint loses the deadline, keeps
// the request's values, ends with its client, and gives its place in
// the queue up for the next request.
func TestLift(t *testing.T) {
	type key struct{}
	g := newGate("next")
	lifted := make(chan context.Context, 1)
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("n") != "stream" {
			g.ServeHTTP(w, r)
			return
		}
		ctx := Lift(context.WithValue(r.Context(), key{}, "value"))
		lifted <- ctx
		<-ctx.Done()
	})
	h := Deadline(time.Hour)(admitWithin(1, time.Hour)(stream))
	client, leave := context.WithCancel(context.Background())
	done := serve(client, h, "stream")
	ctx := <-lifted
	if _, has := ctx.Deadline(); has || ctx.Value(key{}) != "value" {
		t.Errorf("the lifted context: deadline %v, value %v; want none, and the request's value", has, ctx.Value(key{}))
	}
	next := serve(context.Background(), h, "next")
	waitFor(t, "the next request to take the stream's place", func() bool { return len(g.order()) == 1 })
	close(g.release["next"])
	<-next
	leave()
	<-done
	if ctx.Err() == nil {
		t.Error("the lifted context lives on after its client left")
	}
}

func TestAdmitDefaultsToTwicePerCPU(t *testing.T) {
	n := 2 * runtime.GOMAXPROCS(0)
	names := make([]string, n+1)
	for i := range names {
		names[i] = string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	g := newGate(names...)
	h := admitWithin(0, time.Hour)(g)
	var answers []<-chan *httptest.ResponseRecorder
	for _, name := range names {
		answers = append(answers, serve(context.Background(), h, name))
	}
	waitFor(t, "the default number of requests to start", func() bool { return len(g.order()) == n })
	time.Sleep(30 * time.Millisecond)
	if got := len(g.order()); got != n {
		t.Errorf("%d requests started; want %d (twice GOMAXPROCS)", got, n)
	}
	for _, name := range names {
		close(g.release[name])
	}
	for _, a := range answers {
		<-a
	}
}
