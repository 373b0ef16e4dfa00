package auth

import (
	"cmp"
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/ent/configurator"
	"github.com/configurator/catalogue/ent/owner"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// The scopes (RFC 9068's space-separated scope claim) that make a provider
// token a dashboard or an Open API caller.
const (
	ScopeDashboard = "catalogue:dashboard"
	ScopeOpenAPI   = "catalogue:open_api"
)

// Default claims that name a provider token's owner and configurator.
const (
	DefaultOwnerClaim        = "owner_id"
	DefaultConfiguratorClaim = "configurator_id"
)

// ProviderConfig configures the OpenID provider whose access tokens the
// service accepts beside its own.
type ProviderConfig struct {
	// Issuer is the provider's issuer URL (OIDC_ISSUER): https, or http
	// on a loopback address for development and tests.
	Issuer string
	// Audience is the aud the tokens must carry (OIDC_AUDIENCE).
	Audience string
	// OwnerClaim names the claim holding the owner id (a string or a
	// number); DefaultOwnerClaim when empty.
	OwnerClaim string
	// ConfiguratorClaim names the claim holding an Open API caller's
	// configurator id; DefaultConfiguratorClaim when empty.
	ConfiguratorClaim string
	// Client makes the discovery and JWKS requests; a client with a 10 s
	// timeout when nil.
	Client *http.Client
}

// The timing of the provider's key set.
const (
	// JWKSRefreshEvery is how often the provider's keys are fetched again
	// in any case, so that a key the provider dropped stops verifying.
	JWKSRefreshEvery = 10 * time.Minute
	// UnknownKidEvery is the least time between two fetches caused by a
	// token naming a kid the cache does not hold (the provider rotated):
	// a flood of forged kids costs the provider one request per interval.
	UnknownKidEvery = 5 * time.Second
)

// providerAlgs are the algorithms accepted from the provider: asymmetric
// only, never none or HS256 (whose key would be the public one).
var providerAlgs = []string{"RS256", "ES256", "EdDSA"}

// Provider verifies the access tokens of an OpenID provider (JWTs per
// RFC 9068) with its keys, cached, and maps their claims to a caller.
type Provider struct {
	issuer, audience      string
	ownerClaim, confClaim string
	// keys holds the provider's keys, fetched every JWKSRefreshEvery;
	// refreshing reads them after fetching them again.
	keys, refreshing jwkset.Storage
	unknownKid       *rate.Limiter
	now              func() time.Time
	// removals counts the fetches that found a key dropped (keyStore).
	removals *atomic.Uint64
}

// keyStore keeps the provider's keys for jwkset, which replaces them all
// at every fetch, periodic or caused by an unknown kid; it counts the
// fetches that dropped a key, or changed the key a kid names, so that the
// tokens of that key stop resolving from the cache as they stop verifying
// (Tokens.keyRemovals).
type keyStore struct {
	*jwkset.MemoryJWKSet
	mu       sync.Mutex
	removals atomic.Uint64
}

// KeyReplaceAll stores the keys of a fetch.
func (s *keyStore) KeyReplaceAll(ctx context.Context, given []jwkset.JWK) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.MemoryJWKSet.KeyReadAll(ctx)
	if err != nil {
		return err
	}
	if err := s.MemoryJWKSet.KeyReplaceAll(ctx, given); err != nil {
		return err
	}
	// Counted after the replacement, as Signer.removals.
	for _, o := range old {
		if !slices.ContainsFunc(given, func(n jwkset.JWK) bool { return sameKey(o, n) }) {
			s.removals.Add(1)
			break
		}
	}
	return nil
}

// sameKey reports whether a and b are one key under one kid.
func sameKey(a, b jwkset.JWK) bool {
	if a.Marshal().KID != b.Marshal().KID {
		return false
	}
	k, ok := a.Key().(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b.Key())
}

// CheckIssuer refuses an issuer URL that is not https, except http on a
// loopback address (http://127.0.0.1:PORT, http://[::1]:PORT,
// http://localhost:PORT) for local development and tests.
func CheckIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("OIDC_ISSUER %q is not an absolute URL without query", issuer)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		if ip := net.ParseIP(h); (ip != nil && ip.IsLoopback()) || h == "localhost" {
			return nil
		}
	}
	return fmt.Errorf("OIDC_ISSUER %q must be https (plain http only on a loopback address, for development)", issuer)
}

// NewProvider discovers the provider at cfg.Issuer
// (/.well-known/openid-configuration), fetches its keys from the
// jwks_uri it names and keeps them until ctx ends, fetching them again
// every JWKSRefreshEvery and when a token names an unknown kid (at most
// once every UnknownKidEvery). It fails when the provider cannot be
// discovered or its keys cannot be fetched.
func NewProvider(ctx context.Context, cfg ProviderConfig, log *slog.Logger) (*Provider, error) {
	if err := CheckIssuer(cfg.Issuer); err != nil {
		return nil, err
	}
	if cfg.Audience == "" {
		return nil, errors.New("OIDC_AUDIENCE is required with OIDC_ISSUER")
	}
	client := boundClient(cmp.Or(cfg.Client, &http.Client{Timeout: 10 * time.Second}))
	log = cmp.Or(log, slog.Default())
	jwksURL, err := discover(ctx, client, cfg.Issuer)
	if err != nil {
		return nil, err
	}
	kept := &keyStore{MemoryJWKSet: jwkset.NewMemoryStorage()}
	store, err := jwkset.NewStorageFromHTTP(jwksURL, jwkset.HTTPClientStorageOptions{
		Storage:         kept,
		Client:          client,
		Ctx:             ctx,
		HTTPTimeout:     10 * time.Second,
		RefreshInterval: JWKSRefreshEvery,
		RefreshErrorHandler: func(_ context.Context, err error) {
			log.Warn("could not refresh the OpenID provider's keys; keeping the ones known", "jwks_uri", jwksURL, "err", err)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("OpenID provider keys at %s: %w", jwksURL, err)
	}
	// NewStorageFromHTTP has fetched the keys once already: a provider
	// whose keys cannot be fetched is found at start.
	// A read through refreshing fetches the keys again when the kid is
	// not among them; keyFunc lets it happen at most once every
	// UnknownKidEvery (unknownKid), refusing the tokens in between at once
	// rather than holding them.
	refreshing, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs:          map[string]jwkset.Storage{jwksURL: store},
		RefreshUnknownKID: rate.NewLimiter(rate.Inf, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("OpenID provider keys: %w", err)
	}
	return &Provider{
		issuer:     cfg.Issuer,
		audience:   cfg.Audience,
		ownerClaim: cmp.Or(cfg.OwnerClaim, DefaultOwnerClaim),
		confClaim:  cmp.Or(cfg.ConfiguratorClaim, DefaultConfiguratorClaim),
		keys:       store,
		refreshing: refreshing,
		unknownKid: rate.NewLimiter(rate.Every(UnknownKidEvery), 1),
		now:        time.Now,
		removals:   &kept.removals,
	}, nil
}

// discover reads the provider's metadata and returns its jwks_uri.
func discover(ctx context.Context, client *http.Client, issuer string) (string, error) {
	u := strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("OpenID discovery: %w", err)
	}
	res, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("OpenID discovery at %s: %w", u, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("OpenID discovery at %s: HTTP %d", u, res.StatusCode)
	}
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.NewDecoder(res.Body).Decode(&meta); err != nil {
		return "", fmt.Errorf("OpenID discovery at %s: %w", u, err)
	}
	// OpenID Connect Discovery 1.0, 4.3: the issuer must be the one asked.
	if meta.Issuer != issuer {
		return "", fmt.Errorf("OpenID discovery at %s names issuer %q; want %q (OIDC_ISSUER must be the issuer exactly)", u, meta.Issuer, issuer)
	}
	if meta.JWKSURI == "" {
		return "", fmt.Errorf("OpenID discovery at %s names no jwks_uri", u)
	}
	if err := CheckIssuer(meta.JWKSURI); err != nil {
		return "", fmt.Errorf("the provider's jwks_uri %q must be https", meta.JWKSURI)
	}
	return meta.JWKSURI, nil
}

// key returns the provider's public key named kid.
func (p *Provider) key(kid string) (any, error) {
	if kid == "" {
		return nil, errors.New("no kid")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	jwk, err := p.keys.KeyRead(ctx, kid)
	if errors.Is(err, jwkset.ErrKeyNotFound) && p.unknownKid.Allow() {
		jwk, err = p.refreshing.KeyRead(ctx, kid)
	}
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", kid, err)
	}
	return jwk.Key(), nil
}

// caller is what a verified provider token says of its caller.
type caller struct {
	subject     string // the record's subject: a digest of the fields below
	kind        viewer.Kind
	owner, conf int
	until       time.Time
}

// accessTypes are the typ values accepted of a provider token: an access
// token's (RFC 9068 2.1: at+jwt), and JWT, which Keycloak, Entra ID and
// others put on their access tokens; none is accepted too (typ is
// optional in RFC 7519). Any other typ is a token of another use (a
// logout token, a DPoP proof, an ID token typed as such), refused even
// when the provider signed it (RFC 8725 3.11).
var accessTypes = []string{"at+jwt", "JWT"}

// verify checks a provider token and maps its claims: a bad or expired
// token is Unauthenticated, a valid one without the claims it needs is
// Forbidden naming the claim.
func (p *Provider) verify(token string) (caller, error) {
	j, err := readJWS(token)
	if err != nil {
		return caller{}, err
	}
	return p.verifyJWS(j)
}

// verifyJWS verifies a token whose header readJWS read: its typ and alg,
// then its signature with the key its kid names, and only then its
// claims.
func (p *Provider) verifyJWS(j jws) (caller, error) {
	if err := j.checkTyp("an access token's (at+jwt or JWT)", accessTypes...); err != nil {
		return caller{}, err
	}
	if !slices.Contains(providerAlgs, j.alg) {
		return caller{}, errInvalidToken
	}
	key, err := p.key(j.kid)
	if err != nil || !j.verify(jwt.GetSigningMethod(j.alg), key) {
		return caller{}, errInvalidToken
	}
	claims := jwt.MapClaims{}
	err = j.claims(claims, p.now, jwt.WithIssuer(p.issuer), jwt.WithAudience(p.audience), jwt.WithExpirationRequired())
	if err != nil {
		return caller{}, err
	}
	sub, _ := claims["sub"].(string)
	if sub == "" {
		return caller{}, apperr.E(apperr.Forbidden, "the token has no sub claim")
	}
	owner, err := idClaim(claims, p.ownerClaim)
	if err != nil {
		return caller{}, err
	}
	c := caller{owner: owner}
	scopes, err := scopeClaim(claims)
	if err != nil {
		return caller{}, err
	}
	switch {
	case slices.Contains(scopes, ScopeDashboard):
		c.kind = viewer.KindDashboard
	case slices.Contains(scopes, ScopeOpenAPI):
		c.kind = viewer.KindOpenAPI
		if c.conf, err = idClaim(claims, p.confClaim); err != nil {
			return caller{}, err
		}
	default:
		return caller{}, apperr.E(apperr.Forbidden, "the token's scope claim has neither %s nor %s", ScopeDashboard, ScopeOpenAPI)
	}
	exp, _ := claims.GetExpirationTime()
	c.until = exp.Add(leeway)
	// One record per caller and scope: the same sub with another owner or
	// kind is another record. A digest keeps the column short whatever the
	// provider's ids.
	h := sha256.Sum256([]byte(strings.Join([]string{p.issuer, sub, string(c.kind), strconv.Itoa(c.owner), strconv.Itoa(c.conf)}, "\x00")))
	c.subject = "oidc:" + hex.EncodeToString(h[:16])
	return c, nil
}

// scopeClaim returns the scopes of the scope claim: a space-separated
// string (RFC 9068 2.2.3, RFC 8693 4.2) or, as some providers issue it,
// an array of strings, each one scope; none when the claim is absent.
// A claim of another shape is Forbidden naming it.
func scopeClaim(claims jwt.MapClaims) ([]string, error) {
	switch s := claims["scope"].(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Fields(s), nil
	case []any:
		scopes := make([]string, len(s))
		for i, e := range s {
			str, ok := e.(string)
			if !ok {
				return nil, errScopeShape
			}
			scopes[i] = str
		}
		return scopes, nil
	}
	return nil, errScopeShape
}

var errScopeShape = apperr.E(apperr.Forbidden, "the token's scope claim is not a string or an array of strings")

// idClaim reads a positive integer id from claim name, given as a number
// or a string; missing or otherwise is Forbidden naming the claim.
func idClaim(claims jwt.MapClaims, name string) (int, error) {
	v, ok := claims[name]
	if !ok {
		return 0, apperr.E(apperr.Forbidden, "the token has no %s claim", name)
	}
	var id int
	switch x := v.(type) {
	case float64:
		if x >= 1 && x <= math.MaxInt32 && x == math.Trunc(x) {
			id = int(x)
		}
	case string:
		if n, err := strconv.Atoi(x); err == nil && n >= 1 {
			id = n
		}
	}
	if id <= 0 {
		return 0, apperr.E(apperr.Forbidden, "the token's %s claim is not a positive integer id", name)
	}
	return id, nil
}

// resolveProvider resolves a provider token to the record of its caller,
// made at the caller's first token: a record keeps what the service's
// own tokens keep (last use, override data, rate-limit budget) and can be
// revoked like theirs, which refuses that caller's tokens.
func (t *Tokens) resolveProvider(ctx context.Context, token string, j jws, now time.Time, epoch uint64) (*viewer.Viewer, error) {
	if t.provider == nil {
		return nil, errInvalidToken
	}
	c, err := t.provider.verifyJWS(j)
	if err != nil {
		return nil, err
	}
	sys := privacy.DecisionContext(ctx, privacy.Allow)
	rec, err := t.client.APIToken.Query().Where(apitoken.Subject(c.subject)).Only(sys)
	if ent.IsNotFound(err) {
		rec, err = t.createCaller(sys, c)
	}
	if err != nil {
		return nil, err
	}
	if rec.RevokedAt != nil {
		return nil, ErrRevoked
	}
	return t.answer(token, rec, c.until, now, epoch), nil
}

// createCaller makes the record of a provider caller, checking that its
// owner exists and that its configurator is that owner's (Forbidden
// otherwise, naming the claim). Two requests racing here make one record.
func (t *Tokens) createCaller(ctx context.Context, c caller) (*ent.APIToken, error) {
	ok, err := t.client.Owner.Query().Where(owner.ID(c.owner)).Exist(ctx)
	if err != nil {
		return nil, fmt.Errorf("load owner %d: %w", c.owner, err)
	}
	if !ok {
		return nil, apperr.E(apperr.Forbidden, "the token's %s claim names owner %d, which does not exist", t.provider.ownerClaim, c.owner)
	}
	create := t.client.APIToken.Create().SetKind(apitoken.Kind(c.kind)).SetOwnerID(c.owner).SetSubject(c.subject)
	if c.kind == viewer.KindOpenAPI {
		ok, err := t.client.Configurator.Query().Where(configurator.ID(c.conf), configurator.OwnerID(c.owner)).Exist(ctx)
		if err != nil {
			return nil, fmt.Errorf("load configurator %d: %w", c.conf, err)
		}
		if !ok {
			return nil, apperr.E(apperr.Forbidden, "the token's %s claim names configurator %d, which is not one of owner %d", t.provider.confClaim, c.conf, c.owner)
		}
		create.SetConfiguratorID(c.conf)
	}
	if err := create.OnConflictColumns(apitoken.FieldSubject).Ignore().Exec(ctx); err != nil {
		return nil, fmt.Errorf("record provider caller: %w", err)
	}
	rec, err := t.client.APIToken.Query().Where(apitoken.Subject(c.subject)).Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("load provider caller: %w", err)
	}
	return rec, nil
}

// ProviderAnswerLimit bounds each answer of the provider (discovery
// document, key set) that the service reads: whatever answers at the
// provider's address cannot make it read and decode more.
const ProviderAnswerLimit = 1 << 20

// errProviderAnswerTooLarge is what reading past ProviderAnswerLimit
// returns, so that the failure names the limit.
var errProviderAnswerTooLarge = fmt.Errorf("the answer is larger than %d MiB", ProviderAnswerLimit>>20)

// boundClient returns a copy of client whose answers' bodies fail once
// they pass ProviderAnswerLimit: jwkset reads the key set with its own
// decoder, so the bound sits in the transport.
func boundClient(client *http.Client) *http.Client {
	bounded := *client
	next := cmp.Or[http.RoundTripper](client.Transport, http.DefaultTransport)
	bounded.Transport = roundTripFunc(func(req *http.Request) (*http.Response, error) {
		res, err := next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		if res.ContentLength > ProviderAnswerLimit {
			res.Body.Close()
			return nil, errProviderAnswerTooLarge
		}
		res.Body = &boundedBody{ReadCloser: res.Body, left: ProviderAnswerLimit}
		return res, nil
	})
	return &bounded
}

// roundTripFunc makes a function an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// boundedBody fails a read that would pass its limit, rather than
// truncating silently as io.LimitReader does (a truncated JSON document
// would fail as "unexpected EOF", naming nothing).
type boundedBody struct {
	io.ReadCloser
	left int64
}

// Read reads at most the bytes left, then fails with
// errProviderAnswerTooLarge if the body goes on.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, errProviderAnswerTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
