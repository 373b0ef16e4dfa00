package graph

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/rule"
)

// subscribe starts a subscription to the events of the caller's owner of
// the given types. The stream ends when the client leaves or when it
// falls events.Buffer events behind (the hub drops it); it never makes
// the server hold more than that for one subscriber.
func (r *Resolver) subscribe(ctx context.Context, types []string) (<-chan *events.Event, error) {
	owner, all, err := rule.Owner(ctx)
	if err != nil {
		return nil, err
	}
	if all {
		return nil, apperr.E(apperr.Forbidden, "system work has no owner whose events it could subscribe to")
	}
	types, err = eventTypes(types)
	if err != nil {
		return nil, err
	}
	if r.hub == nil {
		return nil, apperr.E(apperr.Unavailable, "subscriptions are not served by this server")
	}
	in, cancel := r.hub.Subscribe(owner, types)
	// The subscription ends with ctx, which closes in.
	context.AfterFunc(ctx, cancel)
	out := make(chan *events.Event)
	go func() {
		defer close(out)
		for e := range in {
			select {
			case out <- &e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// maxUnknownShown is how many unknown event types a refusal names; it
// says how many more there are.
const maxUnknownShown = 10

// eventTypes checks the types argument of a subscription: at most one
// entry a known type, each known, so that what a subscriber keeps and
// scans for every event is bounded by the number of types, and one
// refusal, whatever the list, stays short: an unknown type is named once,
// at most maxUnknownShown of them. Duplicates are folded; the result is in
// the order of first appearance.
func eventTypes(types []string) ([]string, error) {
	if len(types) > len(events.Types) {
		return nil, apperr.Field("types", "{} has %d entries; at most %d are accepted, one for each event type (%s)",
			len(types), len(events.Types), strings.Join(events.Types, ", "))
	}
	var unknown, folded []string
	for _, t := range types {
		switch {
		case !events.Known(t):
			if !slices.Contains(unknown, t) {
				unknown = append(unknown, t)
			}
		case !slices.Contains(folded, t):
			folded = append(folded, t)
		}
	}
	if len(unknown) > 0 {
		shown := make([]string, 0, min(len(unknown), maxUnknownShown))
		for _, t := range unknown[:min(len(unknown), maxUnknownShown)] {
			shown = append(shown, strconv.Quote(Clip(t, 64, 64)))
		}
		more := ""
		if n := len(unknown) - len(shown); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		return nil, apperr.Field("types", "{} names unknown event types %s%s; the types are %s",
			strings.Join(shown, ", "), more, strings.Join(events.Types, ", "))
	}
	return folded, nil
}

// Clip shortens s, something a client sent, to quote it in an answer or
// a log line: s when it has at most max bytes, and otherwise its first
// cut bytes (fewer, to end at a rune boundary) and an ellipsis.
func Clip(s string, max, cut int) string {
	if len(s) <= max {
		return s
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// loadEvent reads the record of an event whose type starts with prefix,
// as the subscriber's token reads it: nil for another kind of record, and
// for one deleted since.
func loadEvent[T any](ctx context.Context, e *events.Event, prefix string, q interface {
	Only(context.Context) (*T, error)
}) (*T, error) {
	if !strings.HasPrefix(e.Type, prefix) || e.Deleted() {
		return nil, nil
	}
	v, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return v, err
}
