package app

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"entgo.io/ent/dialect"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/webhookdelivery"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/query"
	"github.com/configurator/catalogue/internal/rule"
	"github.com/configurator/catalogue/internal/valid"
	"github.com/configurator/catalogue/internal/webhook"
)

// EndpointSecret is a webhook endpoint with its signing secret, which is
// shown only when the endpoint is made or its secret rotated.
type EndpointSecret struct {
	Endpoint *ent.WebhookEndpoint
	Secret   string
}

// CreateWebhookEndpoint is a new endpoint (nil Enabled: enabled).
type CreateWebhookEndpoint struct {
	URL         string
	EventTypes  []string
	Description *string
	Enabled     *bool
}

// CreateWebhookEndpoint checks and stores an endpoint with a fresh
// secret. It needs a dashboard token. An owner keeps at most
// maxEndpoints: the count and the insert are one transaction, which on
// PostgreSQL first locks the owner's row (FOR NO KEY UPDATE, which the
// foreign keys of other writes do not wait for), so that concurrent
// creations of one owner are counted one after the other; SQLite runs
// its write transactions one at a time anyway.
func (a *App) CreateWebhookEndpoint(ctx context.Context, cmd CreateWebhookEndpoint) (*EndpointSecret, error) {
	if err := auth.Allow(ctx, auth.Webhooks); err != nil {
		return nil, err
	}
	owner, all, err := rule.Owner(ctx)
	if err != nil {
		return nil, err
	}
	types, err := a.checkEndpoint(ctx, &cmd.URL, cmd.EventTypes, cmd.Description)
	if err != nil {
		return nil, err
	}
	secret := webhook.NewSecret()
	var ep *ent.WebhookEndpoint
	err = a.withTx(ctx, func(t *database.Tx) error {
		if database.Dialect(a.client) == dialect.Postgres && !all {
			_, err := t.Client.ExecContext(ctx, "SELECT 1 FROM owners WHERE id = $1 FOR NO KEY UPDATE", owner)
			if err != nil {
				return fmt.Errorf("lock owner: %w", err)
			}
		}
		n, err := t.Client.WebhookEndpoint.Query().Count(ctx)
		if err != nil {
			return fmt.Errorf("count webhook endpoints: %w", err)
		}
		if max := cmp.Or(a.events.MaxEndpoints, webhook.DefaultMaxEndpoints); n >= max {
			return apperr.E(apperr.Conflict, "an owner keeps at most %d webhook endpoints (WEBHOOK_MAX_ENDPOINTS) and this one has %d: delete one first", max, n)
		}
		ep, err = t.Client.WebhookEndpoint.Create().SetURL(cmd.URL).SetEventTypes(types).
			SetNillableDescription(cmd.Description).SetNillableEnabled(cmd.Enabled).SetSecret(secret).Save(ctx)
		if err != nil {
			return fmt.Errorf("create webhook endpoint: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &EndpointSecret{Endpoint: ep, Secret: secret}, nil
}

// checkEndpoint validates the fields of an endpoint that are set: the URL
// through the guard (SSRF), the event types among events.Types, the
// description's length. It returns the event types without repeats, in
// their order; a list longer than events.Types is refused whole, so that
// no endpoint keeps, and no dispatch reads, a list of thousands of copies.
func (a *App) checkEndpoint(ctx context.Context, url *string, types []string, description *string) ([]string, error) {
	var errs apperr.List
	if url != nil {
		if err := cmp.Or(a.events.Guard, &webhook.Guard{}).CheckURL(ctx, "url", *url); err != nil {
			errs = append(errs, apperr.Errors(err)...)
		}
	}
	if len(types) > len(events.Types) {
		errs = append(errs, apperr.Field("event_types", "{} must list at most %d event types, the known ones (%v), got %d", len(events.Types), events.Types, len(types)))
		types = nil
	}
	for i, t := range types {
		if !events.Known(t) {
			errs = append(errs, apperr.Field(fmt.Sprintf("event_types[%d]", i), "{} is %q, not an event type; the types are %v", valid.Clip(t), events.Types))
		}
	}
	if description != nil && len(*description) > valid.MaxName {
		errs = append(errs, apperr.Field("description", "{} must be at most %d bytes, got %d", valid.MaxName, len(*description)))
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return distinct(types), nil
}

// distinct is types without repeats, in their first order (nil for
// none, which is stored as before).
func distinct(types []string) []string {
	if len(types) == 0 {
		return types
	}
	out := make([]string, 0, len(types))
	for _, t := range types {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// UpdateWebhookEndpoint changes the fields it sets of endpoint ID; a
// non-nil empty EventTypes means every type.
type UpdateWebhookEndpoint struct {
	ID          int
	URL         *string
	EventTypes  *[]string
	Description *string
	Enabled     *bool
}

// UpdateWebhookEndpoint checks and applies the change. It needs a
// dashboard token; another owner's endpoint is NotFound.
func (a *App) UpdateWebhookEndpoint(ctx context.Context, cmd UpdateWebhookEndpoint) error {
	if err := auth.Allow(ctx, auth.Webhooks); err != nil {
		return err
	}
	var types []string
	if cmd.EventTypes != nil {
		types = *cmd.EventTypes
	}
	types, err := a.checkEndpoint(ctx, cmd.URL, types, cmd.Description)
	if err != nil {
		return err
	}
	u := a.client.WebhookEndpoint.UpdateOneID(cmd.ID).SetNillableURL(cmd.URL).
		SetNillableDescription(cmd.Description).SetNillableEnabled(cmd.Enabled)
	if cmd.EventTypes != nil {
		u.SetEventTypes(types)
	}
	return query.NotFoundAs(u.Exec(ctx), "webhook endpoint", cmd.ID)
}

// DeleteWebhookEndpoint deletes endpoint id and its deliveries. It needs
// a dashboard token.
func (a *App) DeleteWebhookEndpoint(ctx context.Context, id int) error {
	if err := auth.Allow(ctx, auth.Webhooks); err != nil {
		return err
	}
	// The deliveries go by the foreign key's ON DELETE CASCADE.
	return query.NotFoundAs(a.client.WebhookEndpoint.DeleteOneID(id).Exec(ctx), "webhook endpoint", id)
}

// RotateWebhookSecret gives endpoint id a new secret, which signs every
// attempt from now on. It needs a dashboard token.
func (a *App) RotateWebhookSecret(ctx context.Context, id int) (*EndpointSecret, error) {
	if err := auth.Allow(ctx, auth.Webhooks); err != nil {
		return nil, err
	}
	secret := webhook.NewSecret()
	ep, err := a.client.WebhookEndpoint.UpdateOneID(id).SetSecret(secret).Save(ctx)
	if err := query.NotFoundAs(err, "webhook endpoint", id); err != nil {
		return nil, err
	}
	return &EndpointSecret{Endpoint: ep, Secret: secret}, nil
}

// RedeliverWebhook sends delivery id again, from its first attempt, with
// the same webhook-id. A delivery still pending is a Conflict: it is
// already on its way. One conditional UPDATE (pending unless it already
// was) makes it pending, so that of concurrent redeliveries one makes a
// job and the others are refused. It needs a dashboard token.
func (a *App) RedeliverWebhook(ctx context.Context, id int) error {
	if err := auth.Allow(ctx, auth.Webhooks); err != nil {
		return err
	}
	if a.events.Queue == nil {
		return apperr.E(apperr.Unavailable, "webhook deliveries are not running on this server")
	}
	return a.withTx(ctx, func(t *database.Tx) error {
		n, err := t.Client.WebhookDelivery.Update().
			Where(webhookdelivery.ID(id), webhookdelivery.StatusNEQ(webhookdelivery.StatusPENDING)).
			SetStatus(webhookdelivery.StatusPENDING).ClearNextAttemptAt().ClearDeliveredAt().Save(ctx)
		if err != nil {
			return fmt.Errorf("redeliver webhook delivery %d: %w", id, err)
		}
		if n == 0 {
			// Either it is not the viewer's (or not there) or it is pending.
			if _, err := query.One[ent.WebhookDelivery](ctx, t.Client.WebhookDelivery.Query().Where(webhookdelivery.ID(id)), "webhook delivery", id); err != nil {
				return err
			}
			return apperr.E(apperr.Conflict, "webhook delivery %d is pending: it is already being delivered", id)
		}
		// This replica's River works the job once it is committed (an
		// idle replica's is stopped).
		t.AfterCommit(a.events.Queue.Enqueued)
		return a.events.Queue.Enqueue(ctx, t.SQL, id)
	})
}
