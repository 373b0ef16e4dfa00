package graph

import (
	"context"
	"errors"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/ordercount"
)

// orderTotal is the total of an order list (client's where and the one
// the other arguments make) filtered by nothing but, perhaps, one
// configurator: the sum of the owner's order_counts rows,
// which the database keeps exact (ent/schema/ordercount.go), so the
// default listing of an owner with millions of orders costs a few rows
// instead of a scan of them all. Any other filter is counted over the
// matching index (nil: COUNT(*)).
func (r *Resolver) orderTotal(client, where *ent.OrderWhereInput) total {
	if client != nil {
		if _, err := client.P(); !errors.Is(err, ent.ErrEmptyOrderWhereInput) {
			return nil
		}
	}
	w := *where
	conf := w.ConfiguratorID
	w.ConfiguratorID = nil
	if _, err := w.P(); !errors.Is(err, ent.ErrEmptyOrderWhereInput) {
		return nil
	}
	return func(ctx context.Context) (int, error) {
		q := r.client.OrderCount.Query()
		if conf != nil {
			q = q.Where(ordercount.ConfiguratorID(*conf))
		}
		counts, err := q.Select(ordercount.FieldOrders).Ints(ctx)
		n := 0
		for _, c := range counts {
			n += c
		}
		return n, err
	}
}
