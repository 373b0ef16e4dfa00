package logbuf

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/valid"
)

// out is the Writer's output, counting the writes that reach it.
type out struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (o *out) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes++
	return o.b.Write(p)
}

func (o *out) get() (string, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String(), o.writes
}

func TestBatchesAndKeepsOrder(t *testing.T) {
	var o out
	w := New(&o, time.Hour)
	log := slog.New(Split(slog.NewTextHandler(w, nil), slog.NewTextHandler(w.Direct(), nil),
		func(r slog.Record) bool { return r.Message == "request" }))
	log.Info("request", "n", 1)
	log.Info("request", "n", 2)
	if s, n := o.get(); n != 0 {
		t.Fatalf("request lines written before a flush (%d writes): %q", n, s)
	}
	log.Warn("request", "n", 3) // a warning is never held back
	log.Info("started")         // nor any other line
	s, n := o.get()
	if n != 3 {
		t.Errorf("%d writes; want 3 (the batch, the warning, the start line)", n)
	}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		i := strings.Index(line, "msg=")
		order = append(order, line[i:])
	}
	want := []string{"msg=request n=1", "msg=request n=2", "msg=request n=3", "msg=started"}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q; want %q", order, want)
	}
	log.Info("request", "n", 4)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s, _ := o.get(); !strings.Contains(s, "msg=request n=4") {
		t.Errorf("Close did not write the last batch: %q", s)
	}
	log.Info("request", "n", 5) // after Close, straight through
	if s, _ := o.get(); !strings.Contains(s, "msg=request n=5") {
		t.Errorf("a line after Close was held back: %q", s)
	}
}

func TestFlushesOnTimeAndSize(t *testing.T) {
	var o out
	w := New(&o, 20*time.Millisecond)
	defer w.Close()
	w.Write([]byte("line\n"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if s, _ := o.get(); s == "line\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a buffered line was not written by the periodic flush")
		}
		time.Sleep(5 * time.Millisecond)
	}

	var big out
	b := New(&big, time.Hour)
	defer b.Close()
	line := bytes.Repeat([]byte("x"), 1000)
	for range flushAt / len(line) {
		b.Write(line)
	}
	if _, n := big.get(); n != 0 {
		t.Fatalf("written before the buffer was full")
	}
	b.Write(line)
	if s, n := big.get(); n != 1 || len(s) < flushAt {
		t.Errorf("after %d bytes: %d writes of %d bytes; want one write of it all", (flushAt/len(line)+1)*len(line), n, len(s))
	}
}

// TestClipAttr: an error quoting a megabyte of input, as pgx's "unable to
// encode" does, makes a log line of bounded size; short values are kept.
func TestClipAttr(t *testing.T) {
	var b strings.Builder
	log := slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: ClipAttr}))
	huge := errors.New("failed to encode args[0]: unable to encode []interface {}{" + strings.Repeat("[]interface {}{", 70_000))
	log.Error("graphql resolver failed", "err", huge, "path", "orders", "q", strings.Repeat("é", 1<<20))
	if n := b.Len(); n > 3*valid.MaxLoggedBytes {
		t.Errorf("log line of %d bytes; want at most %d", n, 3*valid.MaxLoggedBytes)
	}
	if !strings.Contains(b.String(), "path=orders") || !strings.Contains(b.String(), "unable to encode") {
		t.Errorf("log line %.300s; want the short values and the error's start", b.String())
	}
}
