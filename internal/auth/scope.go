package auth

import (
	"context"
	"fmt"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// Op is an operation that asks more of its caller's token than tenancy
// (which the privacy rules decide). Allow, below, is the one place that
// decides what each asks: the other layers name the operation and pass
// its answer on (internal/archtest holds them to it).
type Op int

// The operations Allow decides.
const (
	// WriteCatalogue creates, updates or deletes a material, category or
	// texture.
	WriteCatalogue Op = iota + 1
	// UpdateOrder moves an order on; placing one needs any token.
	UpdateOrder
	// Webhooks reads or writes webhook endpoints and deliveries.
	Webhooks
	// FreeForm runs a GraphQL document outside the trusted manifest on a
	// server that runs persisted documents only.
	FreeForm
	// Overrides makes a share link of option overrides; its link then
	// reads the configurator without a token.
	Overrides
)

// Allow decides whether the caller in ctx may run op: nil, ErrNoToken
// without a viewer, or Forbidden for a token of another scope. The
// dashboard scope (what an owner's dashboard manages) is a dashboard
// token; the share scope (overrides of one configurator) is the Open API
// token of a configurator. Callers ask before anything else they do (REST
// before it reads a body, the write workflows before any lookup, stored
// file or validation), so that a token of the wrong scope is answered 403
// whatever its input names.
func Allow(ctx context.Context, op Op) error {
	v := viewer.FromContext(ctx)
	if v == nil {
		return apperr.ErrNoToken
	}
	switch op {
	case WriteCatalogue, UpdateOrder, Webhooks, FreeForm:
		if v.Kind != viewer.KindDashboard {
			return apperr.E(apperr.Forbidden, "this write needs a dashboard token")
		}
	case Overrides:
		if v.Kind != viewer.KindOpenAPI || v.ConfiguratorID == 0 {
			return apperr.E(apperr.Forbidden, "overrides need the Open API token of a configurator")
		}
	default:
		return fmt.Errorf("auth: no scope decided for operation %d", op)
	}
	return nil
}
