package events

import (
	"testing"
	"time"
)

// TestHubDropsASlowSubscriber: a subscriber that stops reading is dropped
// once Buffer events wait for it (its channel closes after the ones it
// holds), while another subscriber of the same owner keeps receiving;
// another owner's and another type's events are not delivered at all.
func TestHubDropsASlowSubscriber(t *testing.T) {
	drops := 0
	h := NewHub(func() { drops++ })
	slow, stopSlow := h.Subscribe(1, nil)
	defer stopSlow()
	fast, stopFast := h.Subscribe(1, []string{OrderCreated})
	defer stopFast()
	other, stopOther := h.Subscribe(2, nil)
	defer stopOther()
	got := 0
	for i := range Buffer + 1 {
		h.Publish(Event{ID: i, OwnerID: 1, Type: OrderCreated})
		h.Publish(Event{ID: i, OwnerID: 1, Type: MaterialCreated})
		for len(fast) > 0 {
			if e := <-fast; e.Type != OrderCreated {
				t.Fatalf("the order.created subscriber got %s", e.Type)
			}
			got++
		}
	}
	if got != Buffer+1 {
		t.Errorf("the reading subscriber got %d events; want %d", got, Buffer+1)
	}
	if drops != 1 || h.Len() != 2 {
		t.Errorf("%d drops, %d subscriptions left; want the slow one dropped", drops, h.Len())
	}
	n := 0
	for range slow {
		n++
	}
	if n != Buffer {
		t.Errorf("the slow subscriber's channel held %d events before closing; want %d", n, Buffer)
	}
	if len(other) != 0 {
		t.Errorf("another owner's subscriber got %d events", len(other))
	}
	stopSlow() // ending a dropped subscription again is harmless
}

// TestParseNotification: a notification of this schema is read back into
// the event; another schema's, or a payload it cannot read, is ignored.
func TestParseNotification(t *testing.T) {
	at := time.UnixMilli(1795629510123).UTC()
	e, ok := parse("public", "public:7:3:42:1795629510123:order.updated")
	if !ok || e != (Event{ID: 7, OwnerID: 3, ResourceID: 42, Time: at, Type: OrderUpdated}) {
		t.Errorf("parse = %+v, %v", e, ok)
	}
	for _, p := range []string{"other:7:3:42:1795629510123:order.updated", "public:x:3:42:1:order.updated", "public:7:3"} {
		if _, ok := parse("public", p); ok {
			t.Errorf("parse(%q) accepted it", p)
		}
	}
}
