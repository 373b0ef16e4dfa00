package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/query"
	"github.com/configurator/catalogue/internal/rule"
	"github.com/configurator/catalogue/internal/upload"
	"github.com/configurator/catalogue/internal/valid"
)

// CreateOrder is a new order: its fields, and its images as readers
// (nil Snapshot: none).
type CreateOrder struct {
	ConfiguratorID      int
	Price               float64
	CustomerDetails     json.RawMessage
	ConfiguratorSummary json.RawMessage
	Snapshot            io.Reader
	PrintMap            []io.Reader
}

// CreateOrder validates and stores an order with its images and returns
// its id. With an Idempotency-Key in ctx (internal/idempotency), a retry
// of the same request returns the order the first one created (and
// removes the files it stored again); the same key with another request
// is KeyReused.
func (a *App) CreateOrder(ctx context.Context, cmd CreateOrder) (id int, err error) {
	if err := valid.Order(cmd.Price, &cmd.CustomerDetails, &cmd.ConfiguratorSummary, len(cmd.PrintMap)); err != nil {
		return 0, err
	}
	if err := query.Visible(ctx, a.client.Configurator.Query().Where(configurator.ID(cmd.ConfiguratorID)), "configurator_id", "configurator", cmd.ConfiguratorID); err != nil {
		return 0, err
	}
	files, done := a.batch(ctx, &err)
	defer done()
	snapshot, printMap, err := orderImages(ctx, files, cmd)
	if err != nil {
		return 0, err
	}
	once := a.orderOnce(ctx, cmd, files)
	if id, err := once.replay(ctx); err != nil || id != 0 {
		return replayed(ctx, files, id, err)
	}
	err = a.withTx(ctx, func(t *database.Tx) error {
		create := t.Client.Order.Create().SetConfiguratorID(cmd.ConfiguratorID).SetPrice(cmd.Price).
			SetCustomerDetails(cmd.CustomerDetails).SetConfiguratorSummary(cmd.ConfiguratorSummary).
			SetNillableConfiguratorSnapshot(snapshot).SetConfiguratorPrintMap(printMap)
		id, err = a.insertOrder(ctx, t, create, cmd.ConfiguratorID, once)
		return err
	})
	if errors.Is(err, idempotency.ErrRace) {
		id, err := once.replay(ctx)
		return replayed(ctx, files, id, err)
	}
	if err != nil {
		return 0, fmt.Errorf("create order: %w", err)
	}
	return id, nil
}

// orderImages stores the snapshot (nil URL when there is none) and the
// print map of an order in files and returns their URLs.
func orderImages(ctx context.Context, files *upload.Batch, cmd CreateOrder) (snapshot *string, printMap []string, err error) {
	snapshot, err = image(ctx, files, "configurator_snapshot", cmd.Snapshot)
	if err != nil {
		return nil, nil, err
	}
	printMap = make([]string, len(cmd.PrintMap))
	for i, f := range cmd.PrintMap {
		u, err := image(ctx, files, fmt.Sprintf("configurator_print_map[%d]", i), f)
		if err != nil {
			return nil, nil, err
		}
		printMap[i] = *u
	}
	return snapshot, printMap, nil
}

// insertOrder runs create, the new order of configuratorID, in t with its
// event and its idempotency record, and returns its id. The
// configurator's name is read before the insert (the payload shows it).
// On PostgreSQL the order's id is taken first and the insert comes last,
// after its event and idempotency record: the order-count trigger holds a
// counter row of the configurator until the commit (concurrent orders
// take other rows, internal/database/counts.go), so the less follows the
// insert, the fewer rows a configurator needs (bench/RESULTS.md, events).
func (a *App) insertOrder(ctx context.Context, t *database.Tx, create *ent.OrderCreate, configuratorID int, once orderOnce) (int, error) {
	c := t.Client
	conf, err := c.Configurator.Query().Where(configurator.ID(configuratorID)).Select(configurator.FieldName).Only(ctx)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	create.SetCreatedAt(now).SetUpdatedAt(now)
	recorded := func(o *ent.Order) error {
		if err := once.record(ctx, c, o.ID); err != nil {
			return err
		}
		o.Edges.Configurator = conf
		return a.emit(ctx, t, events.OrderCreated, o.ID, o)
	}
	id, err := t.NextID(ctx, order.Table)
	if err != nil {
		return 0, err
	}
	if id == 0 {
		o, err := create.Save(ctx)
		if err != nil {
			return 0, err
		}
		return o.ID, recorded(o)
	}
	if err := recorded(newOrder(id, create.SetID(id).Mutation())); err != nil {
		return 0, err
	}
	return id, create.Exec(ctx)
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
func (a *App) orderOnce(ctx context.Context, cmd CreateOrder, files *upload.Batch) orderOnce {
	o := orderOnce{client: a.client, key: idempotency.Key(ctx)}
	if o.key == "" {
		return o
	}
	if owner, all, err := rule.Owner(ctx); err == nil && !all {
		o.owner = owner
	}
	parts := []string{"order", strconv.Itoa(cmd.ConfiguratorID), strconv.FormatFloat(cmd.Price, 'g', -1, 64),
		canonical(cmd.CustomerDetails), canonical(cmd.ConfiguratorSummary), strconv.Itoa(len(cmd.PrintMap))}
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
func replayed(ctx context.Context, files *upload.Batch, id int, err error) (int, error) {
	files.Discard(ctx)
	if err == nil && id == 0 {
		err = apperr.E(apperr.Conflict, "another request with this %s is in progress; retry", idempotency.Header)
	}
	return id, err
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

// UpdateOrder moves order ID on: the fields it sets change, the others
// stay, and the Clear flags empty the optional ones, as do Nulls, the
// fields the client set to null (domain names; valid.Nulls refuses the
// others).
type UpdateOrder struct {
	ID                   int
	Status               *string
	InvoiceURL           *string
	ClearInvoiceURL      bool
	OrderStorefront      *string
	ClearOrderStorefront bool
	Nulls                []string
}

// UpdateOrder validates and applies an order update. It needs a dashboard
// token (Forbidden otherwise); another owner's order is NotFound.
func (a *App) UpdateOrder(ctx context.Context, cmd UpdateOrder) error {
	if err := auth.Allow(ctx, auth.UpdateOrder); err != nil {
		return err
	}
	if err := valid.Nulls(&cmd, cmd.Nulls); err != nil {
		return err
	}
	if err := valid.OrderUpdate(cmd.Status, cmd.InvoiceURL, cmd.OrderStorefront); err != nil {
		return err
	}
	return a.withTx(ctx, func(t *database.Tx) error {
		u := t.Client.Order.UpdateOneID(cmd.ID).SetNillableStatus(cmd.Status).
			SetNillableInvoiceURL(cmd.InvoiceURL).SetNillableOrderStorefront(cmd.OrderStorefront)
		if cmd.ClearInvoiceURL {
			u.ClearInvoiceURL()
		}
		if cmd.ClearOrderStorefront {
			u.ClearOrderStorefront()
		}
		if err := query.NotFoundAs(u.Exec(ctx), "order", cmd.ID); err != nil {
			return err
		}
		return emitRead(ctx, a, t, events.OrderUpdated, cmd.ID, query.WithConfiguratorName(t.Client.Order.Query().Where(order.ID(cmd.ID))).Only)
	})
}

// newOrder is the order a creation will insert, as its event shows it:
// the mutation's fields and the schema's default status.
func newOrder(id int, m *ent.OrderMutation) *ent.Order {
	o := &ent.Order{ID: id, Status: order.DefaultStatus}
	o.ConfiguratorID, _ = m.ConfiguratorID()
	o.Price, _ = m.Price()
	o.CustomerDetails, _ = m.CustomerDetails()
	o.ConfiguratorSummary, _ = m.ConfiguratorSummary()
	if s, ok := m.ConfiguratorSnapshot(); ok {
		o.ConfiguratorSnapshot = &s
	}
	o.ConfiguratorPrintMap, _ = m.ConfiguratorPrintMap()
	o.CreatedAt, _ = m.CreatedAt()
	o.UpdatedAt, _ = m.UpdatedAt()
	return o
}
