package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/configurator/catalogue/internal/apperr"
)

// The bounds of a bearer token, checked before any of it is decoded, so
// that whatever a client sends costs the service at most a few
// kilobytes.
const (
	// MaxTokenBytes bounds a whole token, its claims included: four times
	// what the providers issue with many roles or groups (Keycloak, Entra
	// ID: 1 to 4 KB), and a quarter of the request headers the server reads
	// (64 KiB).
	MaxTokenBytes = 16 << 10
	// MaxTokenHeaderBytes bounds a token's header segment, as sent
	// (base64url): a JOSE header of the tokens accepted holds alg, typ and
	// kid, under 200 bytes.
	MaxTokenHeaderBytes = 1 << 10
)

// jws is a JWT (a JWS in compact serialization, RFC 7515 7.1) split into
// its segments, of which only the header is decoded: its claims are
// decoded only once the signature verified (claims), so that a forged
// token costs the decoding of at most MaxTokenHeaderBytes.
type jws struct {
	// signed is the header and claims segments, which the signature signs.
	signed string
	// payload and sig are the claims and signature segments, base64url.
	payload, sig string
	// alg, typ and kid are the header's parameters; hasTyp and hasKid
	// tell a parameter that is absent from an empty one.
	alg, typ, kid  string
	hasTyp, hasKid bool
}

// The answers to a token that is not a JWT the service could read; each
// says what is wrong, which tells nothing of the keys.
var (
	errTooLong        = apperr.E(apperr.Unauthenticated, "invalid token: longer than %d bytes", MaxTokenBytes)
	errNotJWS         = apperr.E(apperr.Unauthenticated, "invalid token: not a JWT (three base64url segments separated by dots)")
	errHeaderTooLong  = apperr.E(apperr.Unauthenticated, "invalid token: its header is longer than %d bytes", MaxTokenHeaderBytes)
	errHeaderNotJSON  = apperr.E(apperr.Unauthenticated, "invalid token: its header is not a JSON object in base64url")
	errHeaderAlg      = apperr.E(apperr.Unauthenticated, "invalid token: its header has no alg string")
	errHeaderKid      = apperr.E(apperr.Unauthenticated, "invalid token: its header's kid is not a string")
	errHeaderTyp      = apperr.E(apperr.Unauthenticated, "invalid token: its header's typ is not a string")
	errHeaderCritical = apperr.E(apperr.Unauthenticated, "invalid token: its header has crit, naming extensions this service does not implement (RFC 7515 4.1.11)")
)

// checkSize refuses a token longer than MaxTokenBytes; it is the first
// thing done with a token, before even a cache looks it up.
func checkSize(token string) error {
	if len(token) > MaxTokenBytes {
		return errTooLong
	}
	return nil
}

// readJWS splits token and reads its header, within the bounds above: a
// token that is not three base64url segments with a JSON object as its
// header, whose alg is not a string or whose kid or typ, when present,
// is not one, is refused, as is any crit header, since the service
// implements no JWS extension (RFC 7515 4.1.11: a crit it does not
// understand makes the token invalid). typ is judged by the caller, as
// the service's own tokens and a provider's differ.
func readJWS(token string) (jws, error) {
	if err := checkSize(token); err != nil {
		return jws{}, err
	}
	head, rest, ok := strings.Cut(token, ".")
	payload, sig, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || strings.IndexByte(sig, '.') >= 0 {
		return jws{}, errNotJWS
	}
	if len(head) > MaxTokenHeaderBytes {
		return jws{}, errHeaderTooLong
	}
	var buf [MaxTokenHeaderBytes * 3 / 4]byte
	n, err := base64.RawURLEncoding.Decode(buf[:], []byte(head))
	if err != nil {
		return jws{}, errHeaderNotJSON
	}
	// Parameter names are case-sensitive (RFC 7515 4), as a map reads them;
	// a struct would take "KID" for "kid".
	var params map[string]json.RawMessage
	if err := json.Unmarshal(buf[:n], &params); err != nil || params == nil {
		return jws{}, errHeaderNotJSON
	}
	j := jws{signed: token[:len(head)+1+len(payload)], payload: payload, sig: sig}
	if _, crit := params["crit"]; crit {
		return jws{}, errHeaderCritical
	}
	if json.Unmarshal(params["alg"], &j.alg) != nil || j.alg == "" {
		return jws{}, errHeaderAlg
	}
	if raw, ok := params["kid"]; ok {
		if json.Unmarshal(raw, &j.kid) != nil || string(raw) == "null" {
			return jws{}, errHeaderKid
		}
		j.hasKid = true
	}
	if raw, ok := params["typ"]; ok {
		if json.Unmarshal(raw, &j.typ) != nil || string(raw) == "null" {
			return jws{}, errHeaderTyp
		}
		j.hasTyp = true
	}
	return j, nil
}

// ours reports whether the token is of the service's own kind by its alg:
// the service signs with HS256 only, which a provider's tokens never use.
func (j jws) ours() bool { return j.alg == jwt.SigningMethodHS256.Alg() }

// checkTyp refuses a typ other than those given (media types: compared
// without case, RFC 7515 4.1.9, with or without their "application/"
// prefix); an absent typ is accepted. what names the tokens accepted in
// the answer.
func (j jws) checkTyp(what string, types ...string) error {
	if !j.hasTyp {
		return nil
	}
	typ := j.typ
	if len(typ) > len("application/") && strings.EqualFold(typ[:len("application/")], "application/") {
		typ = typ[len("application/"):]
	}
	for _, t := range types {
		if strings.EqualFold(typ, t) {
			return nil
		}
	}
	return apperr.E(apperr.Unauthenticated, "invalid token: its header's typ %q is not %s", clip(j.typ), what)
}

// verify checks the signature with method and the first of keys that
// verifies it.
func (j jws) verify(method jwt.SigningMethod, keys ...any) bool {
	sig, err := base64.RawURLEncoding.DecodeString(j.sig)
	if err != nil {
		return false
	}
	for _, k := range keys {
		if method.Verify(j.signed, sig, k) == nil {
			return true
		}
	}
	return false
}

// claims decodes the claims of a token whose signature verified into c
// and validates them with opts (iss, aud, exp, nbf), within the leeway
// and on the clock now: an expired token is apperr.ErrTokenExpired, any
// other failure errInvalidToken.
func (j jws) claims(c jwt.Claims, now func() time.Time, opts ...jwt.ParserOption) error {
	b, err := base64.RawURLEncoding.DecodeString(j.payload)
	if err != nil {
		return errInvalidToken
	}
	if m, ok := c.(jwt.MapClaims); ok {
		err = json.Unmarshal(b, &m)
	} else {
		err = json.Unmarshal(b, c)
	}
	if err != nil {
		return errInvalidToken
	}
	opts = append(opts, jwt.WithLeeway(leeway), jwt.WithTimeFunc(now))
	err = jwt.NewValidator(opts...).Validate(c)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrTokenExpired):
		return apperr.ErrTokenExpired
	}
	return errInvalidToken
}

// clip cuts s, a value from a client, to a length that an answer may quote.
func clip(s string) string {
	const most = 40
	if len(s) <= most {
		return s
	}
	return strings.ToValidUTF8(s[:most], "") + "..."
}
