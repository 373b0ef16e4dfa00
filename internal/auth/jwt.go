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
}

// NewSigner returns a Signer for key.
func NewSigner(key []byte) *Signer { return &Signer{key: key} }

// Mint returns the JWT of token record id. Tokens carry no expiry: they
// live until revoked, which takes effect at once because every request
// resolves the record.
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
// reason is not told to clients.
var ErrInvalidToken = errors.New("invalid token")

// Verify checks the signature with the pinned algorithm, the issuer and
// the expiry when present, and returns the token record id and kind.
func (s *Signer) Verify(token string) (int, viewer.Kind, error) {
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return s.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(Issuer),
		jwt.WithLeeway(30*time.Second),
	)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	id, err := strconv.Atoi(c.Subject)
	if err != nil || id <= 0 {
		return 0, "", fmt.Errorf("%w: bad subject", ErrInvalidToken)
	}
	if c.Kind != viewer.KindOpenAPI && c.Kind != viewer.KindDashboard {
		return 0, "", fmt.Errorf("%w: bad kind", ErrInvalidToken)
	}
	return id, c.Kind, nil
}
