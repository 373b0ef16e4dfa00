package auth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"
	"time"

	jwtlib "github.com/golang-jwt/jwt/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/oidctest"
	"github.com/configurator/catalogue/internal/viewer"
)

// providerClients are the clients of the test provider: owner 1 has
// configurator 1 (a fresh database's first rows), owner 2 exists with none.
var providerClients = map[string]oidctest.Client{
	"dash":       {Claims: map[string]any{"owner_id": 1}},
	"open":       {Claims: map[string]any{"owner_id": "1", "configurator_id": 1}, Alg: "ES256"},
	"ed":         {Claims: map[string]any{"owner_id": 1, "configurator_id": "1"}, Alg: "EdDSA"},
	"noowner":    {Claims: map[string]any{"tenant": 1}},
	"ghost":      {Claims: map[string]any{"owner_id": 999}},
	"wrongconf":  {Claims: map[string]any{"owner_id": 2, "configurator_id": 1}},
	"badowner":   {Claims: map[string]any{"owner_id": "one"}},
	"shortlived": {Claims: map[string]any{"owner_id": 1}, TTL: 60 * time.Second},
}

// providerTokens makes owner 1 with configurator 1 (a fresh database's
// first rows, which providerClients name) and returns a token service
// that also accepts idp's tokens.
func providerTokens(t *testing.T, c *ent.Client, idp *oidctest.Provider) *auth.Tokens {
	t.Helper()
	conf := dbtest.NewTenant(t, c, "O", "Sofa").Confs[0]
	if conf.ID != 1 || conf.OwnerID != 1 {
		t.Fatalf("configurator %d of owner %d; want 1 of 1", conf.ID, conf.OwnerID)
	}
	p, err := auth.NewProvider(context.Background(), auth.ProviderConfig{Issuer: idp.Issuer, Audience: oidctest.Audience}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tokens := dbtest.Tokens(c)
	tokens.SetProvider(p)
	return tokens
}

// TestProviderTokens: tokens of a real OpenID provider (oidc-provider,
// client credentials, JWT access tokens) resolve to their caller by the
// claim mapping, with RS256, ES256 and EdDSA; each caller gets one token
// record, which can be revoked; a token of another audience or issuer,
// an expired one, one with a forged kid and an HS256 one are refused
// (401), one without the claims it needs is 403 naming the claim; and the
// provider's key rotation is picked up without a restart.
func TestProviderTokens(t *testing.T) {
	idp := oidctest.Start(t, providerClients)
	other := oidctest.Start(t, providerClients)
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		ctx := context.Background()
		tokens := providerTokens(t, c, idp)
		dbtest.NewTenant(t, c, "Other")
		resolve := func(jwt string) (*viewer.Viewer, error) { return tokens.Resolve(ctx, jwt) }

		for _, tc := range []struct {
			client, scope string
			want          viewer.Viewer
		}{
			{"dash", auth.ScopeDashboard, viewer.Viewer{OwnerID: 1, Kind: viewer.KindDashboard}},
			{"open", auth.ScopeOpenAPI, viewer.Viewer{OwnerID: 1, Kind: viewer.KindOpenAPI, ConfiguratorID: 1}},
			{"ed", auth.ScopeOpenAPI, viewer.Viewer{OwnerID: 1, Kind: viewer.KindOpenAPI, ConfiguratorID: 1}},
			// Both scopes: the dashboard's wins.
			{"ed", auth.ScopeOpenAPI + " " + auth.ScopeDashboard, viewer.Viewer{OwnerID: 1, Kind: viewer.KindDashboard}},
		} {
			jwt := idp.Token(t, tc.client, tc.scope, "")
			v, err := resolve(jwt)
			if err != nil {
				t.Fatalf("%s (%s): %v", tc.client, tc.scope, err)
			}
			if v.TokenID <= 0 || v.Expires.IsZero() {
				t.Errorf("%s: token record %d, expires %v; want a record and an expiry", tc.client, v.TokenID, v.Expires)
			}
			got := *v
			got.TokenID, got.Expires = 0, time.Time{}
			if got != tc.want {
				t.Errorf("%s (%s): viewer %+v; want %+v", tc.client, tc.scope, got, tc.want)
			}
			// A second token of the same caller: the same record.
			v2, err := resolve(idp.Token(t, tc.client, tc.scope, ""))
			if err != nil || v2.TokenID != v.TokenID {
				t.Errorf("%s: a second token resolved to record %d (%v); want %d", tc.client, v2.TokenID, err, v.TokenID)
			}
		}

		// The provider rotates: a token of its new key resolves at once (before
		// any token with an unknown kid below, as those count against the
		// one fetch an unknown kid may cause every 5 s).
		before := idp.Token(t, "dash", auth.ScopeDashboard, "")
		idp.Rotate(t)
		after := idp.Token(t, "dash", auth.ScopeDashboard, "")
		if kidOf(t, after) == kidOf(t, before) {
			t.Fatalf("the rotation kept kid %s", kidOf(t, after))
		}
		if _, err := resolve(after); err != nil {
			t.Errorf("a token of the provider's new key: %v", err)
		}
		if _, err := resolve(before); err != nil {
			t.Errorf("a token of the provider's old key, still published: %v", err)
		}

		for _, tc := range []struct {
			name string
			jwt  string
			kind apperr.Kind
			msg  string
		}{
			{"another audience", idp.Token(t, "dash", auth.ScopeDashboard, "https://other.test"), apperr.Unauthenticated, "invalid token"},
			{"another issuer", other.Token(t, "dash", auth.ScopeDashboard, ""), apperr.Unauthenticated, "invalid token"},
			{"no owner claim", idp.Token(t, "noowner", auth.ScopeDashboard, ""), apperr.Forbidden, "no owner_id claim"},
			{"owner not an id", idp.Token(t, "badowner", auth.ScopeDashboard, ""), apperr.Forbidden, "owner_id claim is not a positive integer"},
			{"no configurator claim", idp.Token(t, "dash", auth.ScopeOpenAPI, ""), apperr.Forbidden, "no configurator_id claim"},
			{"no catalogue scope", idp.Token(t, "dash", "", ""), apperr.Forbidden, "scope claim has neither"},
			{"unknown owner", idp.Token(t, "ghost", auth.ScopeDashboard, ""), apperr.Forbidden, "owner 999, which does not exist"},
			{"another owner's configurator", idp.Token(t, "wrongconf", auth.ScopeOpenAPI, ""), apperr.Forbidden, "configurator 1, which is not one of owner 2"},
		} {
			_, err := resolve(tc.jwt)
			if apperr.KindOf(err) != tc.kind || err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s: %v; want %s containing %q", tc.name, err, tc.kind, tc.msg)
			}
		}

		// A forged kid, an HS256 token with the provider's claims.
		key, _ := rsa.GenerateKey(rand.Reader, 2048)
		claims := jwtlib.MapClaims{"iss": idp.Issuer, "aud": oidctest.Audience, "sub": "dash", "owner_id": 1,
			"scope": auth.ScopeDashboard, "exp": time.Now().Add(time.Hour).Unix()}
		forged := jwtlib.NewWithClaims(jwtlib.SigningMethodRS256, claims)
		forged.Header["kid"] = kidOf(t, after) + "x"
		fs, _ := forged.SignedString(key)
		sameKid := jwtlib.NewWithClaims(jwtlib.SigningMethodRS256, claims)
		sameKid.Header["kid"] = kidOf(t, after)
		ss, _ := sameKid.SignedString(key)
		hs, _ := jwtlib.NewWithClaims(jwtlib.SigningMethodHS256, claims).SignedString(dbtest.Key)
		for name, jwt := range map[string]string{"forged kid": fs, "the provider's kid, another key": ss, "HS256": hs} {
			if _, err := resolve(jwt); apperr.KindOf(err) != apperr.Unauthenticated {
				t.Errorf("%s: %v; want Unauthenticated", name, err)
			}
		}

		// Expired: 60 s of life and the 5 s leeway.
		short := idp.Token(t, "shortlived", auth.ScopeDashboard, "")
		if _, err := resolve(short); err != nil {
			t.Fatal(err)
		}
		now := time.Now().Add(65 * time.Second)
		tokens.SetClock(func() time.Time { return now })
		if _, err := resolve(short); err == nil || err.Error() != apperr.ErrTokenExpired.Error() {
			t.Errorf("a provider token past exp: %v; want token expired", err)
		}
		tokens.SetClock(time.Now)

		// Revoking a caller's record refuses its tokens.
		v, err := resolve(after)
		if err != nil {
			t.Fatal(err)
		}
		if err := tokens.Revoke(ctx, v.TokenID); err != nil {
			t.Fatal(err)
		}
		if _, err := resolve(idp.Token(t, "dash", auth.ScopeDashboard, "")); apperr.KindOf(err) != apperr.Unauthenticated {
			t.Errorf("a revoked caller's new token: %v; want Unauthenticated", err)
		}
	})
}

// TestProviderConfig: the issuer must be https or loopback http, an
// audience is required, and discovery must name the issuer asked.
func TestProviderConfig(t *testing.T) {
	for iss, ok := range map[string]bool{
		"https://id.example.com/realms/shop": true,
		"http://127.0.0.1:8081":              true,
		"http://localhost:8081":              true,
		"http://[::1]:8081":                  true,
		"http://id.example.com":              false,
		"http://10.0.0.1:8081":               false,
		"ftp://id.example.com":               false,
		"id.example.com":                     false,
	} {
		if err := auth.CheckIssuer(iss); (err == nil) != ok {
			t.Errorf("CheckIssuer(%q) = %v; want ok %v", iss, err, ok)
		}
	}
	idp := oidctest.Start(t, providerClients)
	ctx := context.Background()
	if _, err := auth.NewProvider(ctx, auth.ProviderConfig{Issuer: idp.Issuer}, nil); err == nil || !strings.Contains(err.Error(), "OIDC_AUDIENCE") {
		t.Errorf("no audience: %v", err)
	}
	if _, err := auth.NewProvider(ctx, auth.ProviderConfig{Issuer: idp.Issuer + "/", Audience: "x"}, nil); err == nil || !strings.Contains(err.Error(), "names issuer") {
		t.Errorf("an issuer other than discovery's: %v", err)
	}
}

// TestProviderTokenHeaders: a provider token is an access token (RFC 9068,
// RFC 7515): typ at+jwt or application/at+jwt, or JWT or none as common
// providers issue them, in any case; any other typ (a logout token, a
// DPoP proof, an ID token typed as such) and any crit header are refused
// as 401 naming the header, though the provider's own key signed them. The
// scope claim is a space-separated string or an array of strings, the
// catalogue's scope anywhere in it; a scope of another shape is 403
// naming the claim.
func TestProviderTokenHeaders(t *testing.T) {
	idp := oidctest.Start(t, providerClients)
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		ctx := context.Background()
		tokens := providerTokens(t, c, idp)
		claims := func(scope any) map[string]any {
			return map[string]any{"iss": idp.Issuer, "aud": oidctest.Audience, "sub": "shapes", "owner_id": 1,
				"configurator_id": 1, "scope": scope, "exp": time.Now().Add(5 * time.Minute).Unix()}
		}
		dash := claims(auth.ScopeDashboard)

		for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
			for _, typ := range []any{"at+jwt", "application/at+jwt", "AT+JWT", "Application/At+JWT", "JWT", "application/jwt", nil} {
				header := map[string]any{"typ": typ}
				if typ == nil {
					header = nil
				}
				if _, err := tokens.Resolve(ctx, idp.Sign(t, alg, header, dash)); err != nil {
					t.Errorf("%s, typ %v: %v; want resolved", alg, typ, err)
				}
			}
		}
		for _, tc := range []struct {
			header map[string]any
			msg    string
		}{
			{map[string]any{"typ": "logout+jwt"}, "typ"},
			{map[string]any{"typ": "dpop+jwt"}, "typ"},
			{map[string]any{"typ": "id_token+jwt"}, "typ"},
			{map[string]any{"typ": "secevent+jwt"}, "typ"},
			{map[string]any{"typ": "at+jwt+x"}, "typ"},
			{map[string]any{"typ": ""}, "typ"},
			{map[string]any{"typ": []string{"at+jwt"}}, "typ"},
			{map[string]any{"typ": "at+jwt", "crit": []string{"b64"}, "b64": true}, "crit"},
			{map[string]any{"typ": "at+jwt", "crit": []string{"exp"}}, "crit"},
			{map[string]any{"typ": "at+jwt", "crit": []string{"urn:example:x"}, "urn:example:x": 1}, "crit"},
			{map[string]any{"typ": "at+jwt", "crit": []string{}}, "crit"},
			{map[string]any{"typ": "at+jwt", "crit": nil}, "crit"},
			{map[string]any{"typ": "at+jwt", "x": strings.Repeat("a", 2<<10)}, "header"},
			{map[string]any{"typ": "at+jwt", "kid": 1}, "kid"},
		} {
			_, err := tokens.Resolve(ctx, idp.Sign(t, "ES256", tc.header, dash))
			if apperr.KindOf(err) != apperr.Unauthenticated || !strings.HasPrefix(err.Error(), "invalid token") || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("header %v: %v; want Unauthenticated, invalid token, naming %s", tc.header, err, tc.msg)
			}
		}

		open := viewer.Viewer{OwnerID: 1, Kind: viewer.KindOpenAPI, ConfiguratorID: 1}
		board := viewer.Viewer{OwnerID: 1, Kind: viewer.KindDashboard}
		for _, tc := range []struct {
			scope any
			want  viewer.Viewer
		}{
			{auth.ScopeOpenAPI, open},
			{"openid " + auth.ScopeOpenAPI + " profile", open},
			{[]string{auth.ScopeOpenAPI}, open},
			{[]string{auth.ScopeDashboard}, board},
			{[]string{"openid", auth.ScopeOpenAPI}, open},
			{[]string{auth.ScopeOpenAPI, "openid"}, open},
			{[]string{"openid", auth.ScopeOpenAPI, "profile"}, open},
			{[]string{auth.ScopeOpenAPI, auth.ScopeDashboard}, board},
		} {
			v, err := tokens.Resolve(ctx, idp.Sign(t, "ES256", map[string]any{"typ": "at+jwt"}, claims(tc.scope)))
			if err != nil {
				t.Errorf("scope %#v: %v", tc.scope, err)
				continue
			}
			got := *v
			got.TokenID, got.Expires = 0, time.Time{}
			if got != tc.want {
				t.Errorf("scope %#v: viewer %+v; want %+v", tc.scope, got, tc.want)
			}
		}
		for _, tc := range []struct {
			scope any
			msg   string
		}{
			{[]string{}, "neither"},
			{[]string{"openid"}, "neither"},
			{"[" + auth.ScopeOpenAPI + "]", "neither"},
			{[]string{auth.ScopeOpenAPI + " openid"}, "neither"},
			{42, "string or an array of strings"},
			{[]any{auth.ScopeOpenAPI, 7}, "string or an array of strings"},
			{[]any{[]string{auth.ScopeOpenAPI}}, "string or an array of strings"},
			{map[string]any{"scope": auth.ScopeOpenAPI}, "string or an array of strings"},
		} {
			_, err := tokens.Resolve(ctx, idp.Sign(t, "ES256", map[string]any{"typ": "at+jwt"}, claims(tc.scope)))
			if apperr.KindOf(err) != apperr.Forbidden || !strings.Contains(err.Error(), "scope claim") || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("scope %#v: %v; want Forbidden naming the scope claim, %q", tc.scope, err, tc.msg)
			}
		}
	})
}
