package webhook_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/webhook"
)

// rawReceiver is a receiver on loopback that answers every request with
// answer, byte for byte, and closes the connection.
func rawReceiver(t *testing.T, answer string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	raw := []byte(answer) // made now, not while an attempt is measured
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				conn.Write(raw)
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/hook"
}

// answers are receivers' answers that go past a bound, and what the
// failed attempt says.
var answers = []struct {
	name, answer, err string
}{
	{"9 MB of headers", "HTTP/1.1 200 OK\r\nX-Pad: " + strings.Repeat("a", 9<<20) + "\r\nContent-Length: 0\r\n\r\n", "headers exceeded"},
	{"a 1 MB status line", "HTTP/1.1 200 " + strings.Repeat("a", 1<<20) + "\r\nContent-Length: 0\r\n\r\n", "headers exceeded"},
	{"forty 1xx answers of 10 KB", strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: "+strings.Repeat("a", 10<<10)+"\r\n\r\n", 40) +
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "headers exceeded"},
}

// TestAnswersBounded: a receiver's answer is read within bounds in every
// part: status line and headers (with those of 1xx answers) at most
// webhook.MaxAnswerHeader, past which the attempt fails saying so, and
// costs the replica little memory whatever it sends; a long body is read
// up to webhook.MaxAnswerBody and the 2xx counts.
func TestAnswersBounded(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		q := queue(t, c, time.Hour)
		a := operations(c, q)
		urls := map[string]string{}
		for _, ans := range answers {
			ep, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{URL: rawReceiver(t, ans.answer)})
			if err != nil {
				t.Fatal(err)
			}
			urls[ans.name] = ep.Endpoint.URL
		}
		big, err := a.CreateWebhookEndpoint(w.ctx, app.CreateWebhookEndpoint{
			URL: rawReceiver(t, "HTTP/1.1 200 OK\r\nContent-Length: 9437184\r\n\r\n"+strings.Repeat("a", 9<<20))})
		if err != nil {
			t.Fatal(err)
		}
		start(t, q)
		createMaterial(t, w, a, "Maple")
		waitFor(t, "every attempt", func() bool {
			n, err := c.WebhookDelivery.Query().Where(webhookdelivery.Attempts(1)).Count(w.sys)
			return err == nil && n == len(answers)+1
		})
		for _, d := range c.WebhookDelivery.Query().WithEndpoint().AllX(w.sys) {
			if d.EndpointID == big.Endpoint.ID {
				if d.Status != webhookdelivery.StatusSUCCEEDED {
					t.Errorf("a 9 MB body: delivery %+v; want SUCCEEDED (the 200 counts)", d)
				}
				continue
			}
			for _, ans := range answers {
				if urls[ans.name] == d.Edges.Endpoint.URL && (d.Status != webhookdelivery.StatusPENDING || d.LastError == nil || !strings.Contains(*d.LastError, ans.err)) {
					t.Errorf("%s: delivery %s, error %v; want a failed attempt saying %q", ans.name, d.Status, deref(d.LastError), ans.err)
				}
			}
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestAnswerMemoryBounded: what one attempt allocates while a receiver
// answers with 9 MB of headers stays far below them (it was 90 MB for 16
// attempts), as it does for a 9 MB body.
func TestAnswerMemoryBounded(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		q := queue(t, c, time.Hour) // never started: the attempt alone
		for _, tc := range []struct{ name, answer string }{
			{answers[0].name, answers[0].answer},
			{"a 9 MB body", "HTTP/1.1 200 OK\r\nContent-Length: 9437184\r\n\r\n" + strings.Repeat("a", 9<<20)},
		} {
			url := rawReceiver(t, tc.answer)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := webhook.Attempt(context.Background(), q, url)
			runtime.ReadMemStats(&after)
			got := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: the attempt allocated %d KB (%v)", tc.name, got>>10, err)
			if got > 2<<20 {
				t.Errorf("%s: the attempt allocated %d KB (%v); want under 2 MB", tc.name, got>>10, err)
			}
		}
	})
}

// TestAttemptEndsAtItsTimeout: a receiver that sends its answer a byte
// at a time, its headers or its body, for far longer than the attempt's
// timeout, does not hold the attempt past it: the attempt ends with the
// timeout while the receiver is still sending (the connection is closed
// under it).
func TestAttemptEndsAtItsTimeout(t *testing.T) {
	q := queue(t, dbtest.Open(t, dbtest.SQLite(t)), time.Hour) // never started: the attempt alone
	for _, tc := range []struct{ name, head string }{
		{"headers", "HTTP/1.1 200 OK\r\nX-Slow: "},
		{"body", "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			cut := make(chan time.Duration, 1)
			go func() {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
				if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
					return
				}
				began := time.Now()
				io.WriteString(conn, tc.head)
				for range 600 { // a minute of it
					if _, err := conn.Write([]byte("a")); err != nil {
						cut <- time.Since(began)
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
				close(cut)
			}()
			began := time.Now()
			_, err = webhook.Attempt(context.Background(), q, "http://"+l.Addr().String()+"/hook")
			took := time.Since(began)
			sent, cutShort := <-cut
			t.Logf("the attempt ended after %v: %v; the receiver was cut off after %v", took, err, sent)
			if !cutShort {
				t.Errorf("the receiver sent its whole minute of answer; want the attempt to end at its timeout")
			}
			var timeout interface{ Timeout() bool }
			if tc.name == "headers" && !(errors.As(err, &timeout) && timeout.Timeout()) {
				t.Errorf("attempt: %v; want the timeout", err)
			}
		})
	}
}
