package graph

import (
	"context"
	"fmt"
	"strings"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/viewer"
)

// subscribe starts a subscription to the events of the caller's owner of
// the given types. The stream ends when the client leaves or when it
// falls events.Buffer events behind (the hub drops it); it never makes
// the server hold more than that for one subscriber.
func (r *Resolver) subscribe(ctx context.Context, types []string) (<-chan *events.Event, error) {
	v := viewer.FromContext(ctx)
	if v == nil {
		return nil, apperr.ErrNoToken
	}
	var errs apperr.List
	for i, t := range types {
		if !events.Known(t) {
			errs = append(errs, apperr.Field(fmt.Sprintf("types[%d]", i), "{} is %q, not an event type; the types are %v", t, events.Types))
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	if r.hub == nil {
		return nil, apperr.E(apperr.Unavailable, "subscriptions are not served by this server")
	}
	in, cancel := r.hub.Subscribe(v.OwnerID, types)
	out := make(chan *events.Event)
	go func() {
		defer close(out)
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- &e:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
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

// noLoad is the loader of a page whose items carry no edge.
func noLoad[Q any](q Q) (Q, error) { return q, nil }
