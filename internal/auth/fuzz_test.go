package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// The allocation FuzzToken allows one verification: none for a token over
// MaxTokenBytes (refused by its length), the decoding of a header and a
// signature for a token whose signature does not verify (whatever a
// client can send without a key), and more only for a token whose
// signature verifies, whose claims are decoded: bounded by its size too.
const (
	fuzzOverAlloc       = 0
	fuzzUnverifiedAlloc = 4 * MaxTokenBytes
	fuzzVerifiedAlloc   = 64 * MaxTokenBytes
)

// fuzzNow is the clock of FuzzToken, so that its inputs verify alike on
// every run.
var fuzzNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fuzzKid is the kid of the provider key of FuzzToken.
const fuzzKid = "fuzz-es256"

// fuzzVerifiers returns a Signer with a static key and a Provider whose
// one key is an ES256 key, held in memory (no discovery, no fetch), with
// their signing keys.
func fuzzVerifiers(t testing.TB) (*Signer, []byte, *Provider, *ecdsa.PrivateKey) {
	secret := []byte("fuzz-fuzz-fuzz-fuzz-fuzz-fuzz-32")
	s := NewSigner(secret)
	s.now = func() time.Time { return fuzzNow }
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := jwkset.NewJWKFromKey(&priv.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: fuzzKid, ALG: jwkset.AlgES256}})
	if err != nil {
		t.Fatal(err)
	}
	mem := jwkset.NewMemoryStorage()
	if err := mem.KeyWrite(context.Background(), jwk); err != nil {
		t.Fatal(err)
	}
	p := &Provider{issuer: "https://id.test", audience: "https://catalogue.test",
		ownerClaim: DefaultOwnerClaim, confClaim: DefaultConfiguratorClaim,
		keys: mem, refreshing: mem, unknownKid: rate.NewLimiter(0, 0),
		now: func() time.Time { return fuzzNow }, removals: new(atomic.Uint64)}
	return s, secret, p, priv
}

// allocs returns the bytes one call of f allocates: the fewest over n
// calls, which are f's own whatever other goroutines allocated meanwhile.
func allocs(n int, f func()) uint64 {
	least := ^uint64(0)
	var before, after runtime.MemStats
	for range n {
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// FuzzToken: whatever a client sends as a bearer token, both verifiers
// (the service's own tokens, a provider's) answer without a panic, with
// either a caller or a coded client error of a short message: 401
// (Unauthenticated), or 403 (Forbidden) naming a claim of a provider
// token that the provider's key signed. A token is made of the fuzzed
// header and claims: as given (mode 0), as segments with a signature of
// nobody's (1), signed by the service's key (2), signed by the provider's
// (3). Without the key nothing verifies, and a token costs at most the
// allocations above.
func FuzzToken(f *testing.F) {
	exp := `,"exp":` + strconv.FormatInt(fuzzNow.Add(time.Hour).Unix(), 10)
	own := `{"iss":"configurator-catalogue","sub":"7","kind":"open_api"`
	prov := `{"iss":"https://id.test","aud":"https://catalogue.test","sub":"s","owner_id":1,"configurator_id":"1"` + exp
	for _, seed := range []struct {
		header, claims string
		mode           byte
	}{
		{`{"alg":"HS256","typ":"JWT","kid":"` + KeyID([]byte("fuzz-fuzz-fuzz-fuzz-fuzz-fuzz-32")) + `"}`, own + `}`, 2},
		{`{"alg":"HS256"}`, own + exp + `}`, 2},
		{`{"alg":"HS256","typ":"at+jwt"}`, own + `}`, 2},
		{`{"alg":"HS256","crit":["b64"],"b64":false}`, own + `}`, 2},
		{`{"alg":"HS256","kid":7}`, own + `}`, 2},
		{`{"alg":"HS256"}`, `{"x":` + strings.Repeat("[", 5000) + `}`, 2},
		{`{"alg":"HS256"}`, `{"x":` + strings.Repeat("[", 5000) + `}`, 1},
		{`{"alg":"ES256","kid":"` + fuzzKid + `"}`, `{"x":` + strings.Repeat(`{"a":`, 2000) + `}`, 1},
		{`{"alg":"ES256","typ":"at+jwt","kid":"` + fuzzKid + `"}`, prov + `,"scope":"catalogue:dashboard"}`, 3},
		{`{"alg":"ES256","typ":"application/at+jwt","kid":"` + fuzzKid + `"}`, prov + `,"scope":["openid","catalogue:open_api"]}`, 3},
		{`{"alg":"ES256","kid":"` + fuzzKid + `"}`, prov + `,"scope":[1]}`, 3},
		{`{"alg":"ES256","typ":"logout+jwt","kid":"` + fuzzKid + `"}`, prov + `,"scope":"catalogue:dashboard"}`, 3},
		{`{"alg":"ES256","typ":"JWT","kid":"` + fuzzKid + `","crit":["exp"]}`, prov + `,"scope":"catalogue:dashboard"}`, 3},
		{`{"alg":"ES256","kid":"` + fuzzKid + `"}`, `{"iss":"https://id.test","aud":["x","https://catalogue.test"],"exp":1}`, 3},
		{`{"alg":"none"}`, own + `}`, 1},
		{`{"alg":"RS256","kid":"other"}`, prov + `}`, 1},
		{`{"alg":"HS256","x":"` + strings.Repeat("a", 2000) + `"}`, own + `}`, 2},
		{`[` + strings.Repeat("[", 700), `{}`, 1},
		{"eyJhbGciOiJIUzI1NiJ9.e30.", "", 0},
		{"a.b.c", "", 0},
		{"..", "", 0},
		{strings.Repeat("a.", 9000), "", 0},
		{"", "", 0},
	} {
		f.Add(seed.header, seed.claims, seed.mode)
	}
	s, secret, p, priv := fuzzVerifiers(f)
	f.Fuzz(func(t *testing.T, header, claims string, mode byte) {
		seg := base64.RawURLEncoding.EncodeToString
		in := seg([]byte(header)) + "." + seg([]byte(claims))
		var token string
		switch mode % 4 {
		case 0:
			token = header + claims
		case 1:
			token = in + "." + seg([]byte("nobody's signature, 32 bytes...."))
		case 2:
			sig, err := jwt.SigningMethodHS256.Sign(in, secret)
			if err != nil {
				t.Fatal(err)
			}
			token = in + "." + seg(sig)
		case 3:
			sig, err := jwt.SigningMethodES256.Sign(in, priv)
			if err != nil {
				t.Fatal(err)
			}
			token = in + "." + seg(sig)
		}
		var ownErr, provErr error
		var v verified
		var c caller
		ownAllocs := allocs(3, func() { v, ownErr = s.verify(token) })
		provAllocs := allocs(3, func() { c, provErr = p.verify(token) })

		check := func(who string, err error, kinds ...apperr.Kind) {
			if err == nil {
				if mode%4 < 2 {
					t.Fatalf("%s: %.200q verified without a key", who, token)
				}
				return
			}
			var ok bool
			for _, k := range kinds {
				ok = ok || apperr.KindOf(err) == k
			}
			if !ok {
				t.Fatalf("%s: %.200q: %v is %s", who, token, err, apperr.KindOf(err))
			}
			if len(err.Error()) > 200 {
				t.Fatalf("%s: %.200q: a %d-byte message", who, token, len(err.Error()))
			}
		}
		check("own", ownErr, apperr.Unauthenticated)
		check("provider", provErr, apperr.Unauthenticated, apperr.Forbidden)
		if ownErr == nil && (v.id <= 0 || (v.kind != viewer.KindOpenAPI && v.kind != viewer.KindDashboard)) {
			t.Fatalf("own: %.200q verified as %+v", token, v)
		}
		if provErr == nil && (c.owner <= 0 || c.subject == "" || (c.kind == viewer.KindOpenAPI) != (c.conf > 0)) {
			t.Fatalf("provider: %.200q verified as %+v", token, c)
		}
		if apperr.KindOf(provErr) == apperr.Forbidden && mode%4 != 3 {
			t.Fatalf("provider: %.200q: %v, though no provider key signed it", token, provErr)
		}

		bound := uint64(fuzzVerifiedAlloc)
		switch {
		case len(token) > MaxTokenBytes:
			bound = fuzzOverAlloc
		case mode%4 < 2:
			bound = fuzzUnverifiedAlloc
		}
		for who, a := range map[string]uint64{"own": ownAllocs, "provider": provAllocs} {
			if a > bound {
				t.Fatalf("%s: a %d-byte token (mode %d) allocated %d bytes; want at most %d", who, len(token), mode%4, a, bound)
			}
		}
	})
}
