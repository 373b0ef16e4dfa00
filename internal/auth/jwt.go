package auth

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/configurator/catalogue/internal/viewer"
)

// Issuer is the iss claim of every token; verification requires it.
const Issuer = "configurator-catalogue"

// Claims are the claims of a token: the record id (sub) and its kind.
type Claims struct {
	Kind viewer.Kind `json:"kind"`
	jwt.RegisteredClaims
}

// Signer mints and verifies tokens with one HS256 key.
type Signer struct {
	key []byte
	now func() time.Time
}

// NewSigner returns a Signer for key.
func NewSigner(key []byte) *Signer { return &Signer{key: key, now: time.Now} }

// leeway is the clock skew allowed on exp (and nbf, iat) between the
// minting and the verifying machine.
const leeway = 30 * time.Second

// Mint returns the JWT of token record id. Tokens carry no expiry: they
// live until revoked, which takes effect at once because the record, or
// a cache that revocations invalidate, decides every request (see
// Tokens.Resolve).
func (s *Signer) Mint(id int, kind viewer.Kind, issuedAt time.Time) (string, error) {
	claims := Claims{
		Kind: kind,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:   Issuer,
			Subject:  strconv.Itoa(id),
			IssuedAt: jwt.NewNumericDate(issuedAt),
		},
	}
	t, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.key)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return t, nil
}

// ErrInvalidToken is returned for any token that fails verification; the
// reason is not told to clients, except expiry (ErrExpired), after which a
// client should get a new token rather than look for a fault.
var ErrInvalidToken = errors.New("invalid token")

// ErrExpired wraps the verification error of a well-signed token whose
// expiry has passed.
var ErrExpired = errors.New("expired")

// Verify checks the signature with the pinned algorithm, the issuer and
// the expiry when present, and returns the token record id and kind.
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

func (s *Signer) verify(token string) (verified, error) {
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return s.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(Issuer),
		jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(s.now),
	)
	if errors.Is(err, jwt.ErrTokenExpired) {
		return verified{}, fmt.Errorf("%w: %w", ErrInvalidToken, ErrExpired)
	}
	if err != nil {
		return verified{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	id, err := strconv.Atoi(c.Subject)
	if err != nil || id <= 0 {
		return verified{}, fmt.Errorf("%w: bad subject", ErrInvalidToken)
	}
	if c.Kind != viewer.KindOpenAPI && c.Kind != viewer.KindDashboard {
		return verified{}, fmt.Errorf("%w: bad kind", ErrInvalidToken)
	}
	v := verified{id: id, kind: c.Kind}
	if c.ExpiresAt != nil {
		v.until = c.ExpiresAt.Add(leeway)
	}
	return v, nil
}
