// Command tracewait reads a runtime trace of the server taken under load
// (curl $PPROF_ADDR/debug/pprof/trace?seconds=3) and splits the time of
// each HTTP request into what its goroutine did: running, runnable
// (waiting for a CPU), waiting on the network inside the handler (the
// database) and waiting on anything else. It prints the percentiles of
// each and the mean split of the slowest 1%, which tells where slow
// requests wait (bench/RESULTS.md, issue 27).
//
// A request is the time from its connection's goroutine starting
// net/http's background read of the connection (once the request's
// headers, and body if any, are read) to the goroutine next blocking to
// read the following request from its client.
//
//	go run . trace.out    (its own module: go.mod here)
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// request is the split of one request's time.
type request struct {
	run, runnable, network, other time.Duration
}

func (r request) total() time.Duration { return r.run + r.runnable + r.network + r.other }

// conn follows one connection's goroutine.
type conn struct {
	open    bool // a request is being served
	cur     request
	since   trace.Time
	state   trace.GoState
	network bool // its current wait is on the network
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tracewait TRACE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fail(err)
	}
	r, err := trace.NewReader(f)
	if err != nil {
		fail(err)
	}
	report(requests(r))
}

// requests returns the split of every request the trace saw end.
func requests(r *trace.Reader) []request {
	conns := map[trace.GoID]*conn{}
	var done []request
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			fail(err)
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		now := ev.Time()
		from, to := st.Goroutine()
		if from == trace.GoNotExist && startsBackgroundRead(st.Stack) {
			// ev.Goroutine() serves a request from here on.
			c := conns[ev.Goroutine()]
			if c == nil {
				c = &conn{state: trace.GoRunning}
				conns[ev.Goroutine()] = c
			}
			c.account(now)
			if c.open {
				done = append(done, c.cur)
			}
			c.open, c.cur = true, request{}
			continue
		}
		c := conns[st.Resource.Goroutine()]
		if c == nil {
			continue
		}
		c.account(now)
		c.state = to
		if to == trace.GoWaiting {
			stack := frames(st.Stack)
			if strings.Contains(stack, "net/http.(*conn).readRequest") || strings.Contains(stack, "bufio.(*Reader).Peek;net/http.(*conn).serve;") {
				if c.open {
					done = append(done, c.cur)
				}
				c.open = false
			}
			c.network = st.Reason == "network"
		}
	}
	return done
}

// account adds the time since the last transition to the request served.
func (c *conn) account(now trace.Time) {
	d := time.Duration(now - c.since)
	c.since = now
	if !c.open || c.since == 0 {
		return
	}
	switch c.state {
	case trace.GoRunning:
		c.cur.run += d
	case trace.GoRunnable:
		c.cur.runnable += d
	case trace.GoWaiting:
		if c.network {
			c.cur.network += d
		} else {
			c.cur.other += d
		}
	default:
		c.cur.other += d
	}
}

func startsBackgroundRead(s trace.Stack) bool {
	for f := range s.Frames() {
		if strings.Contains(f.Func, "(*connReader).backgroundRead") {
			return true
		}
	}
	return false
}

func frames(s trace.Stack) string {
	var b strings.Builder
	for f := range s.Frames() {
		b.WriteString(f.Func)
		b.WriteByte(';')
	}
	return b.String()
}

func report(done []request) {
	if len(done) < 100 {
		fail(fmt.Errorf("%d requests in the trace; take it under load", len(done)))
	}
	fmt.Printf("%d requests\n", len(done))
	parts := []struct {
		name string
		of   func(request) time.Duration
	}{{"total", request.total}, {"running", func(r request) time.Duration { return r.run }},
		{"runnable", func(r request) time.Duration { return r.runnable }},
		{"network", func(r request) time.Duration { return r.network }}, {"other", func(r request) time.Duration { return r.other }}}
	for _, p := range parts {
		v := make([]time.Duration, len(done))
		for i, r := range done {
			v[i] = p.of(r)
		}
		slices.Sort(v)
		n := len(v)
		fmt.Printf("%-9s p50 %6.2f  p90 %6.2f  p99 %6.2f ms\n", p.name, ms(v[n/2]), ms(v[n*9/10]), ms(v[n*99/100]))
	}
	slices.SortFunc(done, func(a, b request) int { return int(b.total() - a.total()) })
	for _, k := range []int{len(done) / 100, len(done)} {
		var s request
		for _, r := range done[:k] {
			s.run, s.runnable, s.network, s.other = s.run+r.run, s.runnable+r.runnable, s.network+r.network, s.other+r.other
		}
		n := time.Duration(k)
		name := "all"
		if k < len(done) {
			name = "slowest 1%"
		}
		fmt.Printf("%-10s mean %6.2f ms = running %.2f + runnable %.2f + network %.2f + other %.2f\n",
			name, ms(s.total()/n), ms(s.run/n), ms(s.runnable/n), ms(s.network/n), ms(s.other/n))
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tracewait:", err)
	os.Exit(1)
}
