package graph

import (
	"context"
	"fmt"
	"math"
	"time"

	"entgo.io/contrib/entgql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configurator"
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

// createOrder validates an order, stores its images and inserts it. The
// configurator must be one of the caller's owner (another owner's is not
// found). Files stored before a failure are removed again.
func (r *Resolver) createOrder(ctx context.Context, in model.CreateOrderInput) (_ *ent.Order, err error) {
	if math.IsNaN(in.Price) || math.IsInf(in.Price, 0) || in.Price < 0 {
		return nil, apperr.Field("price", "price must be a number of 0 or more")
	}
	if in.CustomerDetails == nil {
		return nil, apperr.Field("customerDetails", "customerDetails must be a JSON object")
	}
	if in.ConfiguratorSummary == nil {
		return nil, apperr.Field("configuratorSummary", "configuratorSummary must be a JSON object")
	}
	if len(in.ConfiguratorPrintMap) > MaxPrintMaps {
		return nil, apperr.Field("configuratorPrintMap", "configuratorPrintMap takes at most %d images, got %d", MaxPrintMaps, len(in.ConfiguratorPrintMap))
	}
	ok, err := r.client.Configurator.Query().Where(configurator.ID(in.ConfiguratorID)).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("find configurator %d: %w", in.ConfiguratorID, err)
	}
	if !ok {
		return nil, &apperr.Error{Kind: apperr.NotFound, Field: "configuratorId", Message: fmt.Sprintf("configurator %d not found", in.ConfiguratorID)}
	}

	up := &uploads{r: r}
	defer func() {
		if err != nil {
			up.discard(ctx)
		}
	}()
	var snapshot *string
	if in.ConfiguratorSnapshot != nil {
		s, err := up.image(ctx, "configuratorSnapshot", in.ConfiguratorSnapshot)
		if err != nil {
			return nil, err
		}
		snapshot = &s.URL
	}
	printMap := make([]string, 0, len(in.ConfiguratorPrintMap))
	for i, f := range in.ConfiguratorPrintMap {
		s, err := up.image(ctx, fmt.Sprintf("configuratorPrintMap[%d]", i), f)
		if err != nil {
			return nil, err
		}
		printMap = append(printMap, s.URL)
	}
	var id int
	err = r.withTx(ctx, func(c *ent.Client) error {
		o, err := c.Order.Create().
			SetConfiguratorID(in.ConfiguratorID).
			SetPrice(in.Price).
			SetCustomerDetails(in.CustomerDetails).
			SetConfiguratorSummary(in.ConfiguratorSummary).
			SetNillableConfiguratorSnapshot(snapshot).
			SetConfiguratorPrintMap(printMap).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("create order: %w", err)
		}
		id = o.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r.order(ctx, id)
}
