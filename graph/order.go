package graph

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/ordercount"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/upload"
	"github.com/configurator/catalogue/internal/viewer"
)

// orderTotal is the total of an order list (client's where and the one
// the other arguments make) filtered by nothing but, perhaps, one
// configurator: the sum of the owner's order_counts rows,
// which the database keeps exact (ent/schema/ordercount.go), so the
// default listing of an owner with millions of orders costs a few rows
// instead of a scan of them all. Any other filter is counted over the
// matching index (nil: COUNT(*)).
func (r *Resolver) orderTotal(ctx context.Context, client, where *ent.OrderWhereInput) total {
	if client != nil {
		if _, err := client.P(); !errors.Is(err, ent.ErrEmptyOrderWhereInput) {
			return total{}
		}
	}
	w := *where
	conf := w.ConfiguratorID
	w.ConfiguratorID = nil
	if _, err := w.P(); !errors.Is(err, ent.ErrEmptyOrderWhereInput) {
		return total{}
	}
	t := total{run: func(ctx context.Context) (int, error) {
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
	}}
	// In the page's statement the sum is a subquery of order_counts for
	// the owner the tenancy rule filters the orders by (the viewer's),
	// since ent's privacy rules apply to ent queries, not to SQL built
	// here; without a viewer (system work) it runs on its own.
	v := viewer.FromContext(ctx)
	if v == nil {
		return t
	}
	t.of = func(page *sql.Selector) sql.Querier {
		oc := sql.Table(ordercount.Table)
		sum := sql.Dialect(page.Dialect()).Select("CAST(COALESCE(SUM(" + oc.C(ordercount.FieldOrders) + "), 0) AS BIGINT)").From(oc).
			Where(sql.EQ(oc.C(ordercount.FieldOwnerID), v.OwnerID))
		if conf != nil {
			sum.Where(sql.EQ(oc.C(ordercount.FieldConfiguratorID), *conf))
		}
		return sum
	}
	return t
}

// orderOnce is the Idempotency-Key of an order creation, if it has one,
// with the fingerprint of the request (internal/idempotency).
type orderOnce struct {
	client      *ent.Client
	owner       int
	key         string
	fingerprint string
}

// orderOnce reads the request's Idempotency-Key and digests the request:
// its fields (the JSON objects in canonical form, so both transports'
// spellings of one object agree) and the digests of its stored files.
func (r *Resolver) orderOnce(ctx context.Context, in model.CreateOrderInput, files *upload.Batch) orderOnce {
	o := orderOnce{client: r.client, key: idempotency.Key(ctx)}
	if o.key == "" {
		return o
	}
	if v := viewer.FromContext(ctx); v != nil {
		o.owner = v.OwnerID
	}
	parts := []string{"order", strconv.Itoa(in.ConfiguratorID), strconv.FormatFloat(in.Price, 'g', -1, 64),
		canonical(in.CustomerDetails), canonical(in.ConfiguratorSummary), strconv.Itoa(len(in.ConfiguratorPrintMap))}
	o.fingerprint = idempotency.Fingerprint(append(parts, files.Digests()...)...)
	return o
}

// replay returns the order the key already created (0 when none).
func (o orderOnce) replay(ctx context.Context) (int, error) {
	if o.key == "" {
		return 0, nil
	}
	return idempotency.Replay(ctx, o.client, o.owner, o.key, o.fingerprint)
}

// record remembers the key with the order, in the creation's transaction.
func (o orderOnce) record(ctx context.Context, tx *ent.Client, orderID int) error {
	if o.key == "" {
		return nil
	}
	return idempotency.Record(ctx, tx, o.owner, o.key, o.fingerprint, orderID)
}

// replayed answers a retry with the order its key created, after
// removing the files the retry stored again. A key that lost a race (the
// unique index refused it) to a record that is gone when read (swept as
// it expired) is a Conflict, 409: the client's retry runs anew.
func (r *Resolver) replayed(ctx context.Context, files *upload.Batch, id int, err error) (*ent.Order, error) {
	files.Discard(ctx)
	if err == nil && id == 0 {
		err = apperr.E(apperr.Conflict, "another request with this %s is in progress; retry", idempotency.Header)
	}
	if err != nil {
		return nil, err
	}
	return r.Query().Order(ctx, id)
}

// canonical is a JSON object in a canonical form (keys sorted, no spaces).
func canonical(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
