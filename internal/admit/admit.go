// Package admit is a request's place in the server's queue of work
// (edge.Admit). It stands apart from edge so that the database layer,
// which edge depends on, can give the place up while a transaction runs:
// a write waits on locks and the commit's flush for most of its time,
// and holding a place meanwhile left the CPU idle (order creation with
// eight clients fell from 480 to 255 a second in bench/scale.sh).
package admit

import (
	"context"
	"sync"
)

// Place is a request's place among the n worked on at once.
type Place struct {
	slots chan struct{}
	mu    sync.Mutex
	held  bool
	// gone: the place was given up for good (Leave); a request that
	// comes back from the database then runs without one.
	gone bool
}

// Enter waits, in arrival order, for one of the places of slots (a
// channel of capacity n), or until ctx ends.
func Enter(ctx context.Context, slots chan struct{}) (*Place, error) {
	select {
	case slots <- struct{}{}:
		return &Place{slots: slots, held: true}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Leave gives the place up for good; it may be called more than once,
// from any goroutine.
func (p *Place) Leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held {
		<-p.slots
		p.held = false
	}
	p.gone = true
}

type key struct{}

// With returns ctx carrying p, for Wait.
func With(ctx context.Context, p *Place) context.Context { return context.WithValue(ctx, key{}, p) }

// Release gives the place of ctx's request up for good (Place.Leave),
// when it has one: a stream, once its endpoint knows it is one, lives as
// long as its client and must not hold a place meanwhile.
func Release(ctx context.Context) {
	if p, _ := ctx.Value(key{}).(*Place); p != nil {
		p.Leave()
	}
}

// Wait gives up the place of ctx's request while it waits on something
// else (a transaction): the returned func, called when the wait is over,
// queues for a place again behind the requests that arrived meanwhile.
func Wait(ctx context.Context) (back func()) {
	p, _ := ctx.Value(key{}).(*Place)
	if p == nil {
		return func() {}
	}
	p.mu.Lock()
	held := p.held
	if held {
		<-p.slots
		p.held = false
	}
	p.mu.Unlock()
	if !held {
		return func() {}
	}
	return func() {
		select {
		case p.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.gone {
			<-p.slots
			return
		}
		p.held = true
	}
}
