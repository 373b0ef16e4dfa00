package events

import (
	"slices"
	"sync"
)

// Buffer is how many events a subscriber may fall behind before it is
// dropped: a subscriber that does not read cannot make the server hold
// an unbounded queue for it.
const Buffer = 64

// Hub fans events out to the subscribers of this process. Publish never
// waits for a subscriber.
type Hub struct {
	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	dropped func()
}

type subscriber struct {
	owner int
	types []string // empty: every type
	ch    chan Event
}

// NewHub returns an empty hub. onDrop, when set, is called for every
// subscriber dropped for being too slow (a metric).
func NewHub(onDrop func()) *Hub {
	return &Hub{subs: map[*subscriber]struct{}{}, dropped: onDrop}
}

// Subscribe returns the events of owner whose type is among types (all
// when types is empty), and a function that ends the subscription. The
// channel is closed when the subscription ends, or when the subscriber
// fell Buffer events behind.
func (h *Hub) Subscribe(owner int, types []string) (<-chan Event, func()) {
	s := &subscriber{owner: owner, types: slices.Clone(types), ch: make(chan Event, Buffer)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s.ch, func() { h.remove(s) }
}

// remove ends s, once.
func (h *Hub) remove(s *subscriber) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; !ok {
		return false
	}
	delete(h.subs, s)
	close(s.ch)
	return true
}

// Publish hands e to every subscriber of its owner and type; a
// subscriber whose buffer is full is dropped.
func (h *Hub) Publish(e Event) {
	h.mu.Lock()
	var slow []*subscriber
	for s := range h.subs {
		if s.owner != e.OwnerID || (len(s.types) > 0 && !slices.Contains(s.types, e.Type)) {
			continue
		}
		select {
		case s.ch <- e:
		default:
			slow = append(slow, s)
		}
	}
	h.mu.Unlock()
	for _, s := range slow {
		if h.remove(s) && h.dropped != nil {
			h.dropped()
		}
	}
}

// Len is the number of subscriptions.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
