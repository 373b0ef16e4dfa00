// Package viewer carries the authenticated caller through a request's
// context, so that the tenancy rules below both transports can read it.
package viewer

import (
	"context"
	"time"
)

// Kind is the scope of a token; auth.Allow, and nothing else, decides what
// each kind may do beyond reading its owner's data.
type Kind string

// Token kinds, as stored on the token record.
const (
	// KindOpenAPI tokens are minted for one configurator and read its owner's data.
	KindOpenAPI Kind = "open_api"
	// KindDashboard tokens additionally manage the catalogue, orders and
	// webhooks.
	KindDashboard Kind = "dashboard"
)

// Viewer is the caller of a request: the tenant (owner) whose data it sees,
// the scope of its token, its home configurator and the token record.
type Viewer struct {
	OwnerID int
	Kind    Kind
	// ConfiguratorID is the home configurator of an Open API token; 0 for
	// dashboard tokens.
	ConfiguratorID int
	TokenID        int
	// Expires is the exp of the caller's token (new requests are refused
	// from a small leeway after it); zero for a token without expiry. Open
	// subscriptions end then (auth.Tokens.Watch).
	Expires time.Time
}

type ctxKey struct{}

// NewContext returns a copy of ctx that carries v.
func NewContext(ctx context.Context, v *Viewer) context.Context {
	return context.WithValue(ctx, ctxKey{}, v)
}

// FromContext returns the viewer in ctx, or nil for an anonymous request.
func FromContext(ctx context.Context) *Viewer {
	v, _ := ctx.Value(ctxKey{}).(*Viewer)
	return v
}
