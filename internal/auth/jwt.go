package auth

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// Issuer is the iss claim of every token; verification requires it.
const Issuer = "configurator-catalogue"

// Claims are the claims of a token: the record id (sub) and its kind.
type Claims struct {
	Kind viewer.Kind `json:"kind"`
	jwt.RegisteredClaims
}

// Signer mints and verifies the service's own tokens with a set of HS256
// keys: it signs with the newest, naming it in the kid header, and
// verifies with the key a token names (a token without kid, from before
// key sets, with any key of the set).
type Signer struct {
	keys atomic.Pointer[keySet]
	now  func() time.Time
	// client is where the key set is kept; nil for a static key
	// (JWT_SECRET), which never changes.
	client *ent.Client

	reloadMu   sync.Mutex
	lastReload time.Time
	// removals counts the reloads that found a key removed, whichever
	// path reloaded (Reload, a token with an unknown kid); a cache of
	// verified tokens keeps no answer from before a removal (see
	// cache.version).
	removals atomic.Uint64
}

// keySet is one immutable version of the keys.
type keySet struct {
	all  []Key // oldest first
	byID map[string][]byte
}

func newKeySet(keys []Key) *keySet {
	ks := &keySet{all: keys, byID: make(map[string][]byte, len(keys))}
	for _, k := range keys {
		ks.byID[k.ID] = k.Secret
	}
	return ks
}

// NewSigner returns a Signer with the single static key (JWT_SECRET, or
// a test's key).
func NewSigner(key []byte) *Signer {
	s := &Signer{now: time.Now}
	s.keys.Store(newKeySet([]Key{{ID: KeyID(key), Secret: key}}))
	return s
}

// OpenSigner returns the Signer of the service: with secret (JWT_SECRET)
// when it is set, otherwise with the key set kept in the database, which
// Reload refreshes.
func OpenSigner(ctx context.Context, c *ent.Client, secret string) (*Signer, error) {
	if secret != "" {
		if len(secret) < MinSecretLen {
			return nil, fmt.Errorf("JWT_SECRET is %d bytes; use at least %d", len(secret), MinSecretLen)
		}
		return NewSigner([]byte(secret)), nil
	}
	keys, err := Keys(ctx, c)
	if err != nil {
		return nil, err
	}
	s := &Signer{now: time.Now, client: c, lastReload: time.Now()}
	s.keys.Store(newKeySet(keys))
	return s, nil
}

// KeysEvery is how often a serving process reloads its key set in any
// case (Tokens.Run), and the least time between two reloads that a token
// with an unknown kid causes, so that a flood of forged kids costs at
// most one query per interval. On PostgreSQL a rotation or retirement is
// also heard at once (KeysChannel).
const KeysEvery = 5 * time.Second

// Reload reads the key set again and reports whether a key was removed.
// The tokens of a removed key stop resolving at once, from caches too,
// however the removal is found (here or at a token with an unknown kid):
// see removals. A static Signer has nothing to reload.
func (s *Signer) Reload(ctx context.Context) (removed bool, err error) {
	if s.client == nil {
		return false, nil
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	return s.reloadLocked(ctx)
}

func (s *Signer) reloadLocked(ctx context.Context) (bool, error) {
	s.lastReload = time.Now()
	keys, err := Keys(ctx, s.client)
	if err != nil {
		return false, err
	}
	next := newKeySet(keys)
	old := s.keys.Swap(next)
	for id := range old.byID {
		if _, ok := next.byID[id]; !ok {
			// Counted after the swap: a token verified with the removed
			// key before it is answered from no cache once this is seen.
			s.removals.Add(1)
			return true, nil
		}
	}
	return false, nil
}

// unknownKid reloads the key set for a token naming a kid the set does
// not hold (a key rotated by another process), at most once every
// KeysEvery, and returns that kid's key if it is there now.
func (s *Signer) unknownKid(kid string) ([]byte, bool) {
	if s.client == nil {
		return nil, false
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if k, ok := s.keys.Load().byID[kid]; ok {
		return k, true
	}
	if time.Since(s.lastReload) < KeysEvery {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.reloadLocked(ctx); err != nil {
		return nil, false
	}
	k, ok := s.keys.Load().byID[kid]
	return k, ok
}

// Keys returns the current key set, oldest first; the last one signs.
func (s *Signer) Keys() []Key { return s.keys.Load().all }

// leeway is the clock skew allowed on exp (and nbf, iat) between the
// minting and the verifying machine. It is small because a token's
// expiry also ends its open subscriptions (viewer.Expires).
const leeway = 5 * time.Second

// Mint returns the JWT of token record id, which expires at expires,
// signed with the newest key. A zero expires mints a JWT without expiry:
// it lives until revoked, which takes effect at once because the record,
// or a cache that revocations invalidate, decides every request (see
// Tokens.Resolve).
func (s *Signer) Mint(id int, kind viewer.Kind, issuedAt, expires time.Time) (string, error) {
	claims := Claims{
		Kind: kind,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:   Issuer,
			Subject:  strconv.Itoa(id),
			IssuedAt: jwt.NewNumericDate(issuedAt),
		},
	}
	if !expires.IsZero() {
		claims.ExpiresAt = jwt.NewNumericDate(expires)
	}
	ks := s.keys.Load()
	k := ks.all[len(ks.all)-1]
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	t.Header["kid"] = k.ID
	signed, err := t.SignedString(k.Secret)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return signed, nil
}

// errInvalidToken is the answer to any token that fails verification; the
// reason is not told to clients, except expiry (apperr.ErrTokenExpired),
// after which a client should get a new token rather than look for a fault.
var errInvalidToken = apperr.E(apperr.Unauthenticated, "invalid token")

// Verify checks the header (readJWS: bounds, crit; typ JWT or none), the
// signature with the pinned algorithm, then the issuer and the expiry
// when present, and returns the token record id and kind; a token that
// fails is Unauthenticated: errInvalidToken, apperr.ErrTokenExpired, or
// what is wrong with its shape.
func (s *Signer) Verify(token string) (int, viewer.Kind, error) {
	v, err := s.verify(token)
	return v.id, v.kind, err
}

// verified is what a JWT that verified says.
type verified struct {
	id   int
	kind viewer.Kind
	// until is the instant from which the JWT no longer verifies (its exp
	// plus the leeway); zero when it has no exp. A cached answer keeps
	// it, so that a cache hit expires exactly when verification would.
	until time.Time
}

// keysOf returns the keys that may have signed j: the one its kid names,
// or for a token without kid (signed before key sets) every key of the
// set.
func (s *Signer) keysOf(j jws) []any {
	ks := s.keys.Load()
	if !j.hasKid {
		keys := make([]any, len(ks.all))
		for i, k := range ks.all {
			keys[i] = k.Secret
		}
		return keys
	}
	if k, ok := ks.byID[j.kid]; ok {
		return []any{k}
	}
	if k, ok := s.unknownKid(j.kid); ok {
		return []any{k}
	}
	return nil
}

// ownTypes are the typ values of the service's own tokens: JWT, which it
// mints, or none (RFC 7519 5.1: typ is optional).
var ownTypes = []string{"JWT"}

func (s *Signer) verify(token string) (verified, error) {
	j, err := readJWS(token)
	if err != nil {
		return verified{}, err
	}
	return s.verifyJWS(j)
}

// verifyJWS verifies a token whose header readJWS read: its typ, then its
// signature with the pinned algorithm, and only then its claims.
func (s *Signer) verifyJWS(j jws) (verified, error) {
	if err := j.checkTyp("JWT, the service's tokens'", ownTypes...); err != nil {
		return verified{}, err
	}
	if !j.ours() || !j.verify(jwt.SigningMethodHS256, s.keysOf(j)...) {
		return verified{}, errInvalidToken
	}
	var c Claims
	if err := j.claims(&c, s.now, jwt.WithIssuer(Issuer)); err != nil {
		return verified{}, err
	}
	id, err := strconv.Atoi(c.Subject)
	if err != nil || id <= 0 || (c.Kind != viewer.KindOpenAPI && c.Kind != viewer.KindDashboard) {
		return verified{}, errInvalidToken
	}
	v := verified{id: id, kind: c.Kind}
	if c.ExpiresAt != nil {
		v.until = c.ExpiresAt.Add(leeway)
	}
	return v, nil
}
