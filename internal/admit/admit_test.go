package admit

import (
	"context"
	"testing"
	"time"
)

// entered reports whether Enter gets a place of slots within 50 ms.
func entered(t *testing.T, slots chan struct{}) (*Place, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	p, err := Enter(ctx, slots)
	return p, err == nil
}

func TestWaitGivesThePlaceUpUntilBack(t *testing.T) {
	slots := make(chan struct{}, 1)
	a, ok := entered(t, slots)
	if !ok {
		t.Fatal("the first request found no place")
	}
	if _, ok := entered(t, slots); ok {
		t.Fatal("a second request entered while the only place was held")
	}
	ctx := With(context.Background(), a)
	back := Wait(ctx)
	b, ok := entered(t, slots)
	if !ok {
		t.Fatal("no place while the first request waits on the database")
	}
	returned := make(chan struct{})
	go func() { back(); close(returned) }()
	select {
	case <-returned:
		t.Fatal("the first request came back while the second held the only place")
	case <-time.After(50 * time.Millisecond):
	}
	b.Leave()
	<-returned
	if _, ok := entered(t, slots); ok {
		t.Fatal("a request entered while the first, back from the database, held the place")
	}
	a.Leave()
	if _, ok := entered(t, slots); !ok {
		t.Fatal("the place was not freed when the first request left")
	}
}

func TestBackAfterLeaveKeepsNoPlace(t *testing.T) {
	slots := make(chan struct{}, 1)
	a, _ := entered(t, slots)
	back := Wait(With(context.Background(), a))
	a.Leave() // the hold time passed while the statement ran
	back()
	if len(slots) != 0 {
		t.Fatalf("%d places held after a request that left came back; want none", len(slots))
	}
}

func TestWaitWithoutAPlace(t *testing.T) {
	// Work outside a request (the job queue, migrations) has no place.
	Wait(context.Background())()
	slots := make(chan struct{}, 1)
	a, _ := entered(t, slots)
	ctx, cancel := context.WithCancel(With(context.Background(), a))
	back := Wait(ctx)
	b, _ := entered(t, slots)
	cancel()
	back() // returns at once: the request is over
	b.Leave()
	a.Leave()
	if len(slots) != 0 {
		t.Fatalf("%d places held; want none", len(slots))
	}
}
