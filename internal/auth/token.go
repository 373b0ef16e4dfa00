package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
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
//
// Token uses are noted in memory and written by Run in the background,
// never on a request's path (see FlushEvery).
type Tokens struct {
	client *ent.Client
	signer *Signer
	now    func() time.Time
	usage  usage

	running    atomic.Bool
	flushEvery time.Duration
}

// NewTokens returns the token service over client, signing with signer.
// It is usable at once, as the CLI uses it; a serving process also calls
// Run, without which uses are noted but not written.
func NewTokens(client *ent.Client, signer *Signer) *Tokens {
	return &Tokens{client: client, signer: signer, now: time.Now, flushEvery: FlushEvery}
}

// Run does the background work of a serving process until ctx is done:
// it writes the noted token uses every FlushEvery. When ctx is done it
// writes the uses noted so far and returns that last write's error. Run
// is called at most once; a failed periodic write is logged on log and
// retried with the next.
func (t *Tokens) Run(ctx context.Context, log *slog.Logger) error {
	if !t.running.CompareAndSwap(false, true) {
		return errors.New("token service already running")
	}
	if log == nil {
		log = slog.Default()
	}
	tick := time.NewTicker(t.flushEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if err := t.flushUsage(ctx); err != nil {
				log.Warn("could not write token usage; retrying with the next flush", "err", err)
			}
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			return t.flushUsage(fctx)
		}
	}
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

// Resolve verifies a JWT and returns the viewer of its token record. A bad
// signature, an unknown or revoked record, or a kind that does not match
// the record is Unauthenticated. The use is noted for Run to write.
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
	t.usage.note(rec.ID, t.now())
	v := &viewer.Viewer{OwnerID: rec.OwnerID, Kind: kind, TokenID: rec.ID}
	if rec.ConfiguratorID != nil {
		v.ConfiguratorID = *rec.ConfiguratorID
	}
	return v, nil
}
