package graph

import (
	"context"
	"time"

	"entgo.io/contrib/entgql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/graph/scalar"
	"github.com/configurator/catalogue/internal/apperr"
)

// ordersPage filters orders by configurator and by creation date. Both date
// bounds are inclusive whole UTC days: startDate from its 00:00:00, endDate
// up to the end of its day.
func (r *Resolver) ordersPage(ctx context.Context, page, perPage *int, orderBy *ent.OrderOrderField, dir *entgql.OrderDirection, configuratorID *int, startDate, endDate *scalar.Date) (*model.OrderPage, error) {
	sort, err := sortOf(orderBy, dir, sortSpec{column: order.FieldCreatedAt, desc: true})
	if err != nil {
		return nil, err
	}
	if startDate != nil && endDate != nil && endDate.Before(startDate.Time) {
		return nil, apperr.Field("endDate", "endDate %s is before startDate %s", endDate.Format(time.DateOnly), startDate.Format(time.DateOnly))
	}
	q := r.client.Order.Query()
	if configuratorID != nil {
		q = q.Where(order.ConfiguratorID(*configuratorID))
	}
	if startDate != nil {
		q = q.Where(order.CreatedAtGTE(startDate.Time))
	}
	if endDate != nil {
		q = q.Where(order.CreatedAtLT(endDate.AddDate(0, 0, 1)))
	}
	items, info, err := paginate[ent.Order, order.OrderOption](ctx, q, page, perPage, sort, func(q *ent.OrderQuery) (*ent.OrderQuery, error) {
		return eager(ctx, q, restOrder, "data")
	})
	if err != nil {
		return nil, err
	}
	return &model.OrderPage{Data: items, Pagination: info}, nil
}

// order loads one order with its configurator.
func (r *Resolver) order(ctx context.Context, id int) (*ent.Order, error) {
	q, err := eager(ctx, r.client.Order.Query().Where(order.ID(id)), restOrder)
	if err != nil {
		return nil, err
	}
	return one[ent.Order](ctx, q, "order", id)
}

// restOrder loads what REST v1 shows of an order: its configurator.
func restOrder(q *ent.OrderQuery) *ent.OrderQuery { return q.WithConfigurator() }
