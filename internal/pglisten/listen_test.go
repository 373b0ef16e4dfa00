package pglisten_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/pglisten"
)

// heard records what the part of a test heard.
type heard struct {
	mu                     sync.Mutex
	payloads               []string
	listening, alive, lost int
}

func (h *heard) add(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f()
}

func (h *heard) get() (payloads []string, listening, alive, lost int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.payloads), h.listening, h.alive, h.lost
}

// TestListenerReconnects: the listener hands a part the notifications of
// its channel with the schema of its table, heartbeats (Alive), and when
// its backend is killed tells the part (Lost), hears nothing while it
// cannot connect, then reconnects on a new backend, tells the part again
// (Listening) and hears again; Start's stop ends it with a last Lost.
func TestListenerReconnects(t *testing.T) {
	url := dbtest.Postgres(t)
	db, _, err := database.OpenSQL(url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var schema string
	if err := db.QueryRow(`SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE probe (id int)`); err != nil {
		t.Fatal(err)
	}
	channel := "listen_test_" + schema
	notify := func(payload string) {
		t.Helper()
		if _, err := db.Exec(`SELECT pg_notify($1, $2)`, channel, payload); err != nil {
			t.Fatal(err)
		}
	}

	l, err := pglisten.New(url, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var hold atomic.Bool
	release := make(chan struct{})
	l.Dial = func(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
		if hold.Load() {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return pgx.ConnectConfig(ctx, cfg)
	}
	h := &heard{}
	l.Add(pglisten.Part{
		Table: "probe",
		Channels: map[string]func(context.Context, string, string){
			channel: func(_ context.Context, s, payload string) {
				h.add(func() { h.payloads = append(h.payloads, s+":"+payload) })
			},
		},
		Listening: func(context.Context, time.Time) error { h.add(func() { h.listening++ }); return nil },
		Alive:     func(time.Time) { h.add(func() { h.alive++ }) },
		Lost:      func() { h.add(func() { h.lost++ }) },
	})
	stop := l.Start(context.Background())
	eventually(t, "the listener listens", func() bool { return l.PID() != 0 })
	notify("a")
	eventually(t, "a notification and a heartbeat", func() bool {
		p, _, alive, _ := h.get()
		return len(p) == 1 && alive > 0
	})

	hold.Store(true)
	pid := l.PID()
	if _, err := db.Exec(`SELECT pg_terminate_backend($1)`, int64(pid)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the part hears of the loss", func() bool { _, _, _, lost := h.get(); return lost == 1 && l.PID() == 0 })
	notify("unheard")
	hold.Store(false)
	close(release)
	eventually(t, "the listener reconnects", func() bool { return l.PID() != 0 })
	if got := l.PID(); got == pid {
		t.Errorf("backend pid %d after reconnecting; want a new one", got)
	}
	notify("b")
	eventually(t, "a notification after reconnecting", func() bool { p, _, _, _ := h.get(); return len(p) == 2 })
	stop()
	payloads, listening, _, lost := h.get()
	if want := []string{schema + ":a", schema + ":b"}; !slices.Equal(payloads, want) {
		t.Errorf("heard %q; want %q", payloads, want)
	}
	if listening != 2 || lost != 2 || l.PID() != 0 {
		t.Errorf("Listening %d times, Lost %d times, pid %d after stop; want 2, 2 and 0", listening, lost, l.PID())
	}
}

// TestNotPostgres: on another database there is no listener, and a nil
// one does nothing.
func TestNotPostgres(t *testing.T) {
	l, err := pglisten.New("file:x.db", nil)
	if l != nil || err != nil {
		t.Fatalf("New on SQLite = %v, %v; want nil, nil", l, err)
	}
	l.Add(pglisten.Part{Table: "x"})
	l.Start(context.Background())()
	if l.PID() != 0 {
		t.Error("a nil listener listens")
	}
}

// eventually polls cond for up to ten seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
