package auth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/owner"
	"github.com/configurator/catalogue/ent/predicate"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/pglisten"
	"github.com/configurator/catalogue/internal/viewer"
)

// Tokens manages token records and resolves JWTs to viewers.
//
// Resolve answers from a cache of resolved JWTs when it can do so exactly,
// and reads the token record otherwise. The cache works on PostgreSQL
// while a listener (Listen) is connected that hears every revocation (see
// Revoke); whenever the listener is not connected, every request reads
// its token record.
//
// On SQLite there is no cache: SQLite has no notifications, and `server
// token revoke` writes from another process, so a cache could only be
// exact by asking the database, which is what the read does. That read
// is a lookup by primary key in a local file, microseconds with no
// network round trip, so on SQLite a revoked token is refused from the
// very next request, by every process on the file.
//
// Token uses are noted in memory and written by Run in the background,
// never on a request's path (see FlushEvery).
type Tokens struct {
	client *ent.Client
	signer *Signer
	// provider verifies the OpenID provider's tokens; nil when none is
	// configured.
	provider *Provider
	now      func() time.Time
	cache    *cache
	usage    usage

	running    atomic.Bool
	flushEvery time.Duration
	// listener hears revocations for the cache (Listen); nil: none.
	listener *pglisten.Listener
	// watches are the open streams that end on their token's revocation
	// (Watch); recheckEvery is how often their tokens are read when no
	// listener hears revocations.
	watches      watches
	recheckEvery time.Duration
}

// NewTokens returns the token service over client, signing with signer.
// It is usable at once, without a cache, as the CLI uses it; a serving
// process also calls Run, without which uses are noted but not written.
func NewTokens(client *ent.Client, signer *Signer) *Tokens {
	t := &Tokens{
		client:       client,
		signer:       signer,
		now:          time.Now,
		cache:        newCache(CacheSize),
		flushEvery:   FlushEvery,
		recheckEvery: RecheckEvery,
		watches:      watches{byID: map[int]map[*watch]struct{}{}, kick: make(chan struct{}, 1)},
	}
	t.cache.version = t.keyRemovals
	return t
}

// Run does the background work of a serving process until ctx is done:
// it rereads the tokens of open streams while no listener (Listen) hears
// revocations, and writes the noted token uses every FlushEvery. When ctx
// is done it writes the uses noted so far and returns that last write's
// error. Run is called at most once; a failed periodic write is logged on
// log and retried with the next.
func (t *Tokens) Run(ctx context.Context, log *slog.Logger) error {
	if !t.running.CompareAndSwap(false, true) {
		return errors.New("token service already running")
	}
	log = cmp.Or(log, slog.Default())
	var wg sync.WaitGroup
	wg.Go(func() { t.recheckLoop(ctx, t.Listening, log) })
	tick := time.NewTicker(t.flushEvery)
	defer tick.Stop()
	keysTick := time.NewTicker(KeysEvery)
	defer keysTick.Stop()
	for {
		select {
		case <-keysTick.C:
			// A listening replica hears every key change (Listen), and
			// reloads when it starts listening again: it need not read.
			if !t.Listening() {
				t.reloadKeys(ctx, log)
			}
		case <-tick.C:
			if err := t.flushUsage(ctx); err != nil {
				log.Warn("could not write token usage; retrying with the next flush", "err", err)
			}
		case <-ctx.Done():
			wg.Wait()
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			return t.flushUsage(fctx)
		}
	}
}

// reloadKeys reads the key set again (every KeysEvery, and on
// PostgreSQL when a key change is heard); the cache then drops the JWTs
// of a retired key by itself (keyRemovals), as it does when a token with
// an unknown kid made the reload. A failure is logged and retried with
// the next reload.
func (t *Tokens) reloadKeys(ctx context.Context, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := t.signer.Reload(ctx); err != nil && ctx.Err() == nil {
		log.Warn("could not reload the signing keys; retrying", "err", err)
	}
}

// keyRemovals counts the removals of keys seen so far, the service's own
// and the provider's, whichever path saw them; the cache answers nothing
// it stored before the count last moved, so that a retired key's tokens
// stop resolving from the cache as soon as a reload drops the key.
func (t *Tokens) keyRemovals() uint64 {
	n := t.signer.removals.Load()
	if t.provider != nil {
		n += t.provider.removals.Load()
	}
	return n
}

// CreateOpenAPI records an Open API token for a configurator (its home
// configurator, whose owner's data it reads) and returns its JWT. An
// unknown configurator is NotFound.
func (t *Tokens) CreateOpenAPI(ctx context.Context, configuratorID int, opts ...CreateOption) (string, *ent.APIToken, error) {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	conf, err := t.client.Configurator.Query().Where(configurator.ID(configuratorID)).Only(ctx)
	if ent.IsNotFound(err) {
		return "", nil, apperr.E(apperr.NotFound, "configurator %d not found", configuratorID)
	}
	if err != nil {
		return "", nil, fmt.Errorf("load configurator %d: %w", configuratorID, err)
	}
	return t.create(ctx, t.client.APIToken.Create().SetKind(apitoken.KindOpenAPI).
		SetOwnerID(conf.OwnerID).SetConfiguratorID(conf.ID), opts)
}

// CreateDashboard records a dashboard token of an owner and returns its
// JWT. An unknown owner is NotFound.
func (t *Tokens) CreateDashboard(ctx context.Context, ownerID int, opts ...CreateOption) (string, *ent.APIToken, error) {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	ok, err := t.client.Owner.Query().Where(owner.ID(ownerID)).Exist(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("load owner %d: %w", ownerID, err)
	}
	if !ok {
		return "", nil, apperr.E(apperr.NotFound, "owner %d not found", ownerID)
	}
	return t.create(ctx, t.client.APIToken.Create().SetKind(apitoken.KindDashboard).SetOwnerID(ownerID), opts)
}

// create saves the token record c with the expiry opts ask for and mints
// its JWT.
func (t *Tokens) create(ctx context.Context, c *ent.APITokenCreate, opts []CreateOption) (string, *ent.APIToken, error) {
	rec, err := c.SetNillableExpiresAt(t.expiry(opts)).Save(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("create token: %w", err)
	}
	jwt, err := t.Mint(rec)
	return jwt, rec, err
}

// CreateOption sets a property of a token being created.
type CreateOption func(*createOptions)

type createOptions struct{ ttl time.Duration }

// TTL makes the token expire d after its creation (its JWT carries the
// exp); without it a token lives until revoked.
func TTL(d time.Duration) CreateOption { return func(o *createOptions) { o.ttl = d } }

// expiry returns the expiry that opts ask for, nil for none.
func (t *Tokens) expiry(opts []CreateOption) *time.Time {
	var o createOptions
	for _, f := range opts {
		f(&o)
	}
	if o.ttl <= 0 {
		return nil
	}
	// Whole seconds, as the JWT's exp says it.
	exp := t.now().Add(o.ttl).Truncate(time.Second)
	return &exp
}

// Mint returns a JWT for an existing token record, with the record's
// expiry, signed with the newest key; it is how the demo prints a usable
// token on every start without piling up records.
func (t *Tokens) Mint(rec *ent.APIToken) (string, error) {
	var exp time.Time
	if rec.ExpiresAt != nil {
		exp = *rec.ExpiresAt
	}
	return t.signer.Mint(rec.ID, viewer.Kind(rec.Kind), rec.CreatedAt, exp)
}

// SetProvider makes Resolve accept the access tokens of an OpenID
// provider beside the service's own; call before serving.
func (t *Tokens) SetProvider(p *Provider) { t.provider = p }

// List returns every token record, newest first, for `server token list`.
func (t *Tokens) List(ctx context.Context) ([]*ent.APIToken, error) {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	recs, err := t.client.APIToken.Query().Order(ent.Desc(apitoken.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return recs, nil
}

// Revoke revokes token record id; its JWTs stop working at once, and
// the streams they hold open end (Watch). The
// record is read by every process on SQLite and by every cache miss, and
// on PostgreSQL the same transaction notifies every serving process on
// RevokeChannel, whose listeners evict the token from their caches as
// the notification arrives (a few milliseconds after the commit). An
// unknown id is NotFound; revoking twice keeps the first time (and
// notifies again, which is harmless).
func (t *Tokens) Revoke(ctx context.Context, id int) error {
	ctx = privacy.DecisionContext(ctx, privacy.Allow)
	err := inTx(ctx, t.client, fmt.Sprintf("revoke token %d", id), func(tx *ent.Tx) error {
		var d string
		n, err := tx.APIToken.Update().
			Where(apitoken.ID(id), apitoken.RevokedAtIsNil(), dialectOf(&d)).
			SetRevokedAt(t.now()).Save(ctx)
		if err != nil {
			return fmt.Errorf("revoke token %d: %w", id, err)
		}
		if n == 0 {
			ok, err := tx.APIToken.Query().Where(apitoken.ID(id)).Exist(ctx)
			if err != nil {
				return fmt.Errorf("load token %d: %w", id, err)
			}
			if !ok {
				return apperr.E(apperr.NotFound, "token %d not found", id)
			}
		}
		return notify(ctx, tx, d, RevokeChannel, ":"+strconv.Itoa(id))
	})
	if err != nil {
		return err
	}
	t.watches.revoked(id)
	t.cache.evict(id)
	return nil
}

// inTx runs fn in a transaction of c, committed when fn returns nil and
// rolled back otherwise, so that a failed write leaves nothing; what names
// the work in the errors of the transaction itself.
func inTx(ctx context.Context, c *ent.Client, what string, fn func(*ent.Tx) error) error {
	tx, err := c.Tx(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// dialectOf is a predicate that matches every row and stores the SQL
// dialect of the query in *d. The ent client does not tell its dialect,
// but hands it to every predicate for dialect-specific SQL, so Revoke
// learns from its own UPDATE whether there is a PostgreSQL to notify.
func dialectOf(d *string) predicate.APIToken {
	return func(s *sql.Selector) { *d = s.Dialect() }
}

// Resolve verifies a JWT and returns the viewer of its token record. A bad
// signature, an expired JWT, an unknown or revoked record, or a kind that
// does not match the record is Unauthenticated.
//
// A JWT resolved before is answered from the cache, without parsing it
// again and without any SQL, while the cache is exact (see Tokens); its
// exp, when it has one, is still enforced. Only JWTs that verified and
// whose record is valid are cached. The use is noted for Run to write.
func (t *Tokens) Resolve(ctx context.Context, token string) (*viewer.Viewer, error) {
	if err := checkSize(token); err != nil {
		return nil, err
	}
	now := t.now()
	if v, ok := t.cache.get(token, now); ok {
		t.usage.note(v.TokenID, now)
		return &v, nil
	}
	// The epoch is taken before verifying, so that a key retired while
	// this runs keeps the answer out of the cache.
	epoch := t.cache.begin()
	j, err := readJWS(token)
	if err != nil {
		return nil, err
	}
	if !j.ours() {
		return t.resolveProvider(ctx, token, j, now, epoch)
	}
	claims, err := t.signer.verifyJWS(j)
	if err != nil {
		return nil, err
	}
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	rec, err := t.client.APIToken.Get(sys, claims.id)
	if ent.IsNotFound(err) {
		return nil, errInvalidToken
	}
	if err != nil {
		return nil, fmt.Errorf("load token %d: %w", claims.id, err)
	}
	if rec.RevokedAt != nil {
		return nil, ErrRevoked
	}
	if viewer.Kind(rec.Kind) != claims.kind {
		return nil, errInvalidToken
	}
	until := claims.until
	if rec.ExpiresAt != nil {
		u := rec.ExpiresAt.Add(leeway)
		if !now.Before(u) {
			return nil, apperr.ErrTokenExpired
		}
		if until.IsZero() || u.Before(until) {
			until = u
		}
	}
	return t.answer(token, rec, until, now, epoch), nil
}

// answer is the viewer of rec, whose JWT token verifies until until (zero:
// always); it is cached and its use noted.
func (t *Tokens) answer(token string, rec *ent.APIToken, until, now time.Time, epoch uint64) *viewer.Viewer {
	v := viewer.Viewer{OwnerID: rec.OwnerID, Kind: viewer.Kind(rec.Kind), TokenID: rec.ID}
	// Open streams end at the token's exp itself: the leeway is for
	// the clocks of a new request, not a licence to outlive the exp.
	if !until.IsZero() {
		v.Expires = until.Add(-leeway)
	}
	if rec.ConfiguratorID != nil {
		v.ConfiguratorID = *rec.ConfiguratorID
	}
	t.cache.put(token, v, until, epoch)
	t.usage.note(v.TokenID, now)
	return &v
}
