// Package logbuf batches the server's per-request log lines. There is one
// such line per request and nobody reads it within milliseconds, yet
// written one by one each costs a write system call: about 4% of the CPU
// of a small request. Every other line (start, errors, warnings) is
// written at once, after the batched lines before it, so the log keeps
// its order.
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/configurator/catalogue/internal/valid"
)

// flushAt is the size at which a batch is written without waiting.
const flushAt = 32 << 10

// Writer buffers what is written to it and writes it to its output at
// least every interval, when the buffer reaches 32 KiB, before a direct
// write (Direct), and on Close.
type Writer struct {
	mu       sync.Mutex
	out      io.Writer
	buf      []byte
	closed   bool
	stop     chan struct{}
	flushing sync.WaitGroup
}

// New returns a Writer over out that flushes at least every interval.
func New(out io.Writer, interval time.Duration) *Writer {
	w := &Writer{out: out, stop: make(chan struct{})}
	w.flushing.Go(func() { w.flusher(interval) })
	return w
}

func (w *Writer) flusher(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.Flush()
		}
	}
}

// Write buffers p (writes it through once the Writer is closed).
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.out.Write(p)
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) >= flushAt {
		if err := w.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what is buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.out.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// Close stops the periodic flush and writes what is buffered; later
// writes go straight through.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	w.flushing.Wait()
	return w.Flush()
}

// Direct returns a writer that writes at once, after what is buffered.
func (w *Writer) Direct() io.Writer { return direct{w} }

type direct struct{ w *Writer }

func (d direct) Write(p []byte) (int, error) {
	d.w.mu.Lock()
	defer d.w.mu.Unlock()
	if err := d.w.flushLocked(); err != nil {
		return 0, err
	}
	return d.w.out.Write(p)
}

// Split returns a handler that hands a record to batched when batch says
// so and its level is below Warn, and to direct otherwise.
func Split(batched, direct slog.Handler, batch func(slog.Record) bool) slog.Handler {
	return split{batched: batched, direct: direct, batch: batch}
}

type split struct {
	batched, direct slog.Handler
	batch           func(slog.Record) bool
}

func (s split) Enabled(ctx context.Context, l slog.Level) bool { return s.direct.Enabled(ctx, l) }

func (s split) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn && s.batch(r) {
		return s.batched.Handle(ctx, r)
	}
	return s.direct.Handle(ctx, r)
}

func (s split) WithAttrs(attrs []slog.Attr) slog.Handler {
	return split{batched: s.batched.WithAttrs(attrs), direct: s.direct.WithAttrs(attrs), batch: s.batch}
}

func (s split) WithGroup(name string) slog.Handler {
	return split{batched: s.batched.WithGroup(name), direct: s.direct.WithGroup(name), batch: s.batch}
}

// ClipAttr is the ReplaceAttr of the service's log handlers: a string or
// error value longer than valid.MaxLoggedBytes is written clipped
// (valid.ClipTo), so that an error quoting a client's input whole (a
// driver's "unable to encode" of a value) makes a log line of bounded
// size, whatever logged it.
func ClipAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); len(s) > valid.MaxLoggedBytes {
			a.Value = slog.StringValue(valid.ClipTo(s, valid.MaxLoggedBytes))
		}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			if s := err.Error(); len(s) > valid.MaxLoggedBytes {
				a.Value = slog.StringValue(valid.ClipTo(s, valid.MaxLoggedBytes))
			}
		}
	}
	return a
}
