package events_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/pglisten"
)

// TestPostgresNotifiesAfterCommit: the events of a transaction reach the
// listener once it commits, in order; those of a transaction that rolls
// back never do; the events of many concurrent transactions all arrive
// (several in one statement); and those committed while nothing runs
// wait for the next Run.
func TestPostgresNotifiesAfterCommit(t *testing.T) {
	url := dbtest.Postgres(t)
	c := dbtest.Open(t, url)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub := events.NewHub(nil)
	got, stop := hub.Subscribe(1, nil)
	defer stop()
	lis, err := pglisten.New(url, log)
	if err != nil {
		t.Fatal(err)
	}
	events.Listen(lis, hub)
	defer lis.Start(ctx)()
	n := events.NewPostgres(database.Pool(c), log)
	runCtx, stopRun := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		n.Run(runCtx)
	}()
	write := func(owner int, commit bool, ids ...int) {
		t.Helper()
		tx, err := database.Begin(ctx, c)
		if err != nil {
			t.Error(err)
			return
		}
		for _, id := range ids {
			if err := n.Notify(ctx, tx, events.Event{ID: id, OwnerID: owner, ResourceID: id, Time: time.UnixMilli(int64(id)).UTC(), Type: events.OrderCreated}); err != nil {
				t.Error(err)
			}
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Error(err)
		}
	}
	receive := func(got <-chan events.Event, want int) []int {
		t.Helper()
		var ids []int
		deadline := time.After(10 * time.Second)
		for len(ids) < want {
			select {
			case e, ok := <-got:
				if !ok {
					t.Fatalf("the hub dropped the subscription after %v", ids)
				}
				ids = append(ids, e.ID)
			case <-deadline:
				t.Fatalf("got events %v; want %d", ids, want)
			}
		}
		return ids
	}
	// The listener may start listening after the first notification: wait
	// until one comes through.
	for i := 0; ; i++ {
		write(1, true, -1)
		select {
		case <-got:
		case <-time.After(200 * time.Millisecond):
			if i == 50 {
				t.Fatal("the listener hears nothing")
			}
			continue
		}
		break
	}
	time.Sleep(200 * time.Millisecond)
	for len(got) > 0 {
		<-got
	}

	write(1, false, 100)
	write(1, true, 1, 2, 3)
	if ids := receive(got, 3); ids[0] != 1 || ids[1] != 2 || ids[2] != 3 {
		t.Errorf("one transaction's events arrived as %v; want 1 2 3 (and not the rolled back 100)", ids)
	}

	// Each writer's events go to an owner of its own, so that no
	// subscriber falls Buffer events behind however late the test reads.
	const writers, each = 8, 40
	subs := make([]<-chan events.Event, writers)
	for w := range subs {
		ch, stop := hub.Subscribe(10+w, nil)
		defer stop()
		subs[w] = ch
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				write(10+w, true, i)
			}
		}()
	}
	wg.Wait()
	for w, ch := range subs {
		ids := receive(ch, each)
		for i, id := range ids {
			if id != i {
				t.Fatalf("writer %d's events arrived as %v; want 0 to %d in order", w, ids, each-1)
			}
		}
	}
	if len(got) != 0 {
		t.Errorf("%d more events for owner 1 (the rolled back one?)", len(got))
	}

	// Committed while nothing sends: sent by the next Run.
	stopRun()
	<-ran
	write(1, true, 7)
	go n.Run(ctx)
	if ids := receive(got, 1); ids[0] != 7 {
		t.Errorf("after a restart got %v; want 7", ids)
	}
}
