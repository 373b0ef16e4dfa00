package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/owner"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// Tokens manages token records and resolves JWTs to viewers.
type Tokens struct {
	client *ent.Client
	signer *Signer
	now    func() time.Time
}

// NewTokens returns the token service over client, signing with signer.
func NewTokens(client *ent.Client, signer *Signer) *Tokens {
	return &Tokens{client: client, signer: signer, now: time.Now}
}

// CreateOpenAPI records an Open API token for a configurator (its home
// configurator, whose owner's data it reads) and returns its JWT. An
// unknown configurator is NotFound.
func (t *Tokens) CreateOpenAPI(ctx context.Context, configuratorID int) (string, *ent.APIToken, error) {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	conf, err := t.client.Configurator.Query().Where(configurator.ID(configuratorID)).Only(ctx)
	if ent.IsNotFound(err) {
		return "", nil, apperr.E(apperr.NotFound, "configurator %d not found", configuratorID)
	}
	if err != nil {
		return "", nil, fmt.Errorf("load configurator %d: %w", configuratorID, err)
	}
	rec, err := t.client.APIToken.Create().SetKind(apitoken.KindOpenAPI).
		SetOwnerID(conf.OwnerID).SetConfiguratorID(conf.ID).Save(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("create token: %w", err)
	}
	jwt, err := t.Mint(rec)
	return jwt, rec, err
}

// CreateDashboard records a dashboard token of an owner and returns its
// JWT. An unknown owner is NotFound.
func (t *Tokens) CreateDashboard(ctx context.Context, ownerID int) (string, *ent.APIToken, error) {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	ok, err := t.client.Owner.Query().Where(owner.ID(ownerID)).Exist(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("load owner %d: %w", ownerID, err)
	}
	if !ok {
		return "", nil, apperr.E(apperr.NotFound, "owner %d not found", ownerID)
	}
	rec, err := t.client.APIToken.Create().SetKind(apitoken.KindDashboard).SetOwnerID(ownerID).Save(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("create token: %w", err)
	}
	jwt, err := t.Mint(rec)
	return jwt, rec, err
}

// Mint returns a JWT for an existing token record; it is how the demo
// prints a usable token on every start without piling up records.
func (t *Tokens) Mint(rec *ent.APIToken) (string, error) {
	return t.signer.Mint(rec.ID, viewer.Kind(rec.Kind), rec.CreatedAt)
}

// Revoke revokes token record id; its JWTs stop working at once. An
// unknown id is NotFound; revoking twice keeps the first time.
func (t *Tokens) Revoke(ctx context.Context, id int) error {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	rec, err := t.client.APIToken.Get(ctx, id)
	if ent.IsNotFound(err) {
		return apperr.E(apperr.NotFound, "token %d not found", id)
	}
	if err != nil {
		return fmt.Errorf("load token %d: %w", id, err)
	}
	if rec.RevokedAt != nil {
		return nil
	}
	return t.client.APIToken.UpdateOneID(id).SetRevokedAt(t.now()).Exec(ctx)
}

// lastUsedGranularity bounds how often a token's last_used_at is written:
// at most once a minute, so reads do not turn into writes.
const lastUsedGranularity = time.Minute

// Resolve verifies a JWT and returns the viewer of its token record. A bad
// signature, an unknown or revoked record, or a kind that does not match
// the record is Unauthenticated.
func (t *Tokens) Resolve(ctx context.Context, token string) (*viewer.Viewer, error) {
	id, kind, err := t.signer.Verify(token)
	if err != nil {
		return nil, apperr.E(apperr.Unauthenticated, "invalid token")
	}
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	rec, err := t.client.APIToken.Get(sys, id)
	if ent.IsNotFound(err) {
		return nil, apperr.E(apperr.Unauthenticated, "invalid token")
	}
	if err != nil {
		return nil, fmt.Errorf("load token %d: %w", id, err)
	}
	if rec.RevokedAt != nil {
		return nil, apperr.E(apperr.Unauthenticated, "token revoked")
	}
	if viewer.Kind(rec.Kind) != kind {
		return nil, apperr.E(apperr.Unauthenticated, "invalid token")
	}
	now := t.now()
	if rec.LastUsedAt == nil || now.Sub(*rec.LastUsedAt) >= lastUsedGranularity {
		// Best effort: a failed bookkeeping write must not fail the request.
		_ = t.client.APIToken.UpdateOneID(id).SetLastUsedAt(now).Exec(sys)
	}
	v := &viewer.Viewer{OwnerID: rec.OwnerID, Kind: kind, TokenID: rec.ID}
	if rec.ConfiguratorID != nil {
		v.ConfiguratorID = *rec.ConfiguratorID
	}
	return v, nil
}
