package auth_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	jwtlib "github.com/golang-jwt/jwt/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/problem"
)

// seg is s as a JWT segment.
func seg(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestTokenBounds: whatever a client sends as a token, before anything of
// it is decoded its size is bounded (the token, its header segment), so
// a malformed token is refused as 401 "invalid token" saying what is
// wrong, with a few hundred bytes allocated, never more than the bound,
// and never an error of another kind. A token of the largest accepted
// size, signed with the service's key, still resolves.
func TestTokenBounds(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		ctx := context.Background()
		conf := dbtest.NewTenant(t, c, "O", "Sofa").Confs[0]
		tokens := dbtest.Tokens(c)
		_, rec := dbtest.OpenAPI(t, tokens, conf.ID)
		sign := func(header, claims string) string { return signHS256(t, header, claims) }
		claims := `{"iss":"` + auth.Issuer + `","sub":"` + strconv.Itoa(rec.ID) + `","kind":"open_api"`
		good := sign(`{"alg":"HS256","typ":"JWT"}`, claims+`}`)
		if refused(t, tokens, good) {
			t.Fatal("a well-formed token was refused")
		}
		// The largest token accepted: claims padded up to the bound.
		pad := auth.MaxTokenBytes - len(sign(`{"alg":"HS256","typ":"JWT"}`, claims+`,"x":""}`))
		largest := sign(`{"alg":"HS256","typ":"JWT"}`, claims+`,"x":"`+strings.Repeat("a", pad*3/4)+`"}`)
		if len(largest) > auth.MaxTokenBytes || len(largest) < auth.MaxTokenBytes-4 {
			t.Fatalf("the largest token is %d bytes; want %d", len(largest), auth.MaxTokenBytes)
		}
		if refused(t, tokens, largest) {
			t.Errorf("a token of %d bytes, the bound, was refused", len(largest))
		}

		mib := strings.Repeat("a", 1<<20)
		nested := strings.Repeat("[", 100000)
		for _, tc := range []struct {
			name, token, msg string
			// allocs bounds what one refusal may allocate.
			allocs uint64
		}{
			{"1 MiB of letters", mib, "longer than", 1 << 10},
			{"1 MiB in three segments", mib[:1<<19] + "." + mib[:1<<19] + ".", "longer than", 1 << 10},
			{"1 MiB claims, signed", sign(`{"alg":"HS256"}`, `{"x":"`+mib+`"}`), "longer than", 1 << 10},
			{"a header of 100,000 brackets", seg(nested) + "." + seg("{}") + ".", "longer than", 1 << 10},
			{"a 2 KiB header, signed", sign(`{"alg":"HS256","typ":"JWT","x":"`+strings.Repeat("a", 2<<10)+`"}`, claims+`}`), "header", 1 << 10},
			{"a header of 768 brackets", seg(strings.Repeat("[", 768)) + "." + seg("{}") + ".", "header", 32 << 10},
			{"two segments", seg(`{"alg":"HS256"}`) + "." + seg("{}"), "three", 1 << 10},
			{"four segments", good + ".x", "three", 1 << 10},
			{"no segment", "x", "three", 1 << 10},
			{"an empty header", "." + seg("{}") + ".x", "header", 1 << 10},
			{"a header not base64url", "e30=." + seg("{}") + ".x", "header", 16 << 10},
			{"a header not JSON", seg("alg") + "." + seg("{}") + ".x", "header", 16 << 10},
			{"a header not an object", seg(`["HS256"]`) + "." + seg("{}") + ".x", "header", 16 << 10},
			{"an alg not a string", seg(`{"alg":256}`) + "." + seg("{}") + ".x", "alg", 16 << 10},
			{"no alg", seg(`{"typ":"JWT"}`) + "." + seg("{}") + ".x", "alg", 16 << 10},
			{"a kid not a string", sign(`{"alg":"HS256","kid":7}`, claims+`}`), "kid", 16 << 10},
			{"claims not JSON", sign(`{"alg":"HS256"}`, `{"iss":`), "invalid token", 16 << 10},
			// Claims are decoded only once the signature verified: a
			// forged token costs little whatever its claims.
			{"claims of 10,000 brackets, forged", seg(`{"alg":"HS256"}`) + "." + seg(`{"x":`+strings.Repeat("[", 10000)+`}`) + "." + seg(strings.Repeat("f", 32)), "invalid token", 32 << 10},
			{"claims of 10,000 brackets, signed", sign(`{"alg":"HS256"}`, `{"x":`+strings.Repeat("[", 10000)+`}`), "invalid token", 512 << 10},
		} {
			var err error
			a := auth.Allocs(5, func() { _, err = tokens.Resolve(ctx, tc.token) })
			if apperr.KindOf(err) != apperr.Unauthenticated || !strings.HasPrefix(err.Error(), "invalid token") || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s: %v; want Unauthenticated, invalid token, naming %q", tc.name, err, tc.msg)
			} else if len(err.Error()) > 200 {
				t.Errorf("%s: a %d-byte message", tc.name, len(err.Error()))
			}
			if a > tc.allocs {
				t.Errorf("%s: refusing it allocated %d bytes; want at most %d", tc.name, a, tc.allocs)
			}
		}

		// Through the middleware (REST and GraphQL): a 401 naming the problem.
		h := auth.Middleware(tokens, problem.Write)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Error("a request with a 1 MiB token was served")
		}))
		req := httptest.NewRequest(http.MethodGet, "/graphql", nil)
		req.Header.Set("Authorization", "Bearer "+mib)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "longer than") || w.Body.Len() > 1<<10 {
			t.Errorf("a 1 MiB token: %d %.300s; want 401 naming its length", w.Code, w.Body.String())
		}
	})
}

// TestOwnTokenHeaders: the service's own tokens carry typ JWT (or none,
// before key sets); a token of the service's key with another typ (an
// access token's, a logout or DPoP proof's), or with a crit header (no
// JWS extension is implemented, RFC 7515 4.1.11), is refused as 401
// naming the header.
func TestOwnTokenHeaders(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		conf := dbtest.NewTenant(t, c, "O", "Sofa").Confs[0]
		tokens := dbtest.Tokens(c)
		_, rec := dbtest.OpenAPI(t, tokens, conf.ID)
		claims := `{"iss":"` + auth.Issuer + `","sub":"` + strconv.Itoa(rec.ID) + `","kind":"open_api"}`
		for _, header := range []string{
			`{"alg":"HS256","typ":"JWT"}`, `{"alg":"HS256","typ":"jwt"}`, `{"alg":"HS256","typ":"application/jwt"}`,
			`{"alg":"HS256"}`, `{"typ":"JWT","alg":"HS256","kid":"` + auth.KeyID(dbtest.Key) + `"}`,
		} {
			if refused(t, tokens, signHS256(t, header, claims)) {
				t.Errorf("header %s: refused; want resolved", header)
			}
		}
		for _, tc := range []struct{ header, msg string }{
			{`{"alg":"HS256","typ":"at+jwt"}`, "typ"},
			{`{"alg":"HS256","typ":"logout+jwt"}`, "typ"},
			{`{"alg":"HS256","typ":"dpop+jwt"}`, "typ"},
			{`{"alg":"HS256","typ":"id_token+jwt"}`, "typ"},
			{`{"alg":"HS256","typ":""}`, "typ"},
			{`{"alg":"HS256","typ":1}`, "typ"},
			{`{"alg":"HS256","crit":["b64"],"b64":false}`, "crit"},
			{`{"alg":"HS256","crit":["exp"]}`, "crit"},
			{`{"alg":"HS256","crit":[]}`, "crit"},
			{`{"alg":"HS256","crit":null}`, "crit"},
		} {
			_, err := tokens.Resolve(context.Background(), signHS256(t, tc.header, claims))
			if apperr.KindOf(err) != apperr.Unauthenticated || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("header %s: %v; want Unauthenticated naming %s", tc.header, err, tc.msg)
			}
		}
	})
}

// signHS256 returns the JWT of header and claims, as given, signed with
// dbtest.Key.
func signHS256(t testing.TB, header, claims string) string {
	t.Helper()
	in := seg(header) + "." + seg(claims)
	sig, err := jwtlib.SigningMethodHS256.Sign(in, dbtest.Key)
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}
