package auth_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	jwtlib "github.com/golang-jwt/jwt/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/setting"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/viewer"
)

// kidOf returns the kid header of jwt.
func kidOf(t *testing.T, jwt string) string {
	t.Helper()
	tok, _, err := jwtlib.NewParser().ParseUnverified(jwt, &auth.Claims{})
	if err != nil {
		t.Fatal(err)
	}
	kid, _ := tok.Header["kid"].(string)
	return kid
}

// TestKeyRotation: the key set kept in the database starts from the key of
// before key sets (whose tokens, without kid, keep verifying); a rotation
// adds a key that signs from then on, which another process's signer
// learns at the first token naming it; retiring the old key refuses its
// tokens and keeps the new ones; the newest key cannot be retired.
func TestKeyRotation(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		ctx := context.Background()
		conf := dbtest.NewTenant(t, c, "O", "Sofa").Confs[0]
		legacy, err := auth.SigningKey(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		server, err := auth.OpenSigner(ctx, c, "")
		if err != nil {
			t.Fatal(err)
		}
		keys := server.Keys()
		if len(keys) != 1 || keys[0].ID != auth.KeyID(legacy) || string(keys[0].Secret) != string(legacy) {
			t.Fatalf("first key set %+v; want the settings key alone", keys)
		}
		tokens := auth.NewTokens(c, server)
		// A token of before key sets: no kid.
		_, rec := dbtest.OpenAPI(t, tokens, conf.ID)
		old, err := jwtlib.NewWithClaims(jwtlib.SigningMethodHS256, auth.Claims{Kind: viewer.KindOpenAPI,
			RegisteredClaims: jwtlib.RegisteredClaims{Issuer: auth.Issuer, Subject: strconv.Itoa(rec.ID)}}).SignedString(legacy)
		if err != nil {
			t.Fatal(err)
		}
		if refused(t, tokens, old) {
			t.Fatal("a token without kid, signed with the settings key, was refused")
		}
		first, _ := dbtest.OpenAPI(t, tokens, conf.ID)
		if kid := kidOf(t, first); kid != keys[0].ID {
			t.Errorf("kid %q; want %q", kid, keys[0].ID)
		}

		// `server keys rotate`, in another process.
		added, err := auth.RotateKey(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		cli, err := auth.OpenSigner(ctx, c, "")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(cli.Keys()); n != 2 {
			t.Fatalf("%d keys after a rotation; want 2", n)
		}
		second, _ := dbtest.OpenAPI(t, auth.NewTokens(c, cli), conf.ID)
		if kid := kidOf(t, second); kid != added.ID {
			t.Fatalf("a token created after the rotation has kid %q; want the new key %q", kid, added.ID)
		}
		server.ForgetReload()
		if refused(t, tokens, second) {
			t.Error("the server refused a token of the new key")
		}
		if refused(t, tokens, first) || refused(t, tokens, old) {
			t.Error("the server refused a token of the old key after the rotation")
		}

		if err := auth.RetireKey(ctx, c, added.ID); apperr.KindOf(err) != apperr.Conflict {
			t.Errorf("retiring the newest key: %v; want Conflict", err)
		}
		if err := auth.RetireKey(ctx, c, "nokey"); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("retiring an unknown key: %v; want NotFound", err)
		}
		if err := auth.RetireKey(ctx, c, keys[0].ID); err != nil {
			t.Fatal(err)
		}
		removed, err := server.Reload(ctx)
		if err != nil || !removed {
			t.Fatalf("Reload after a retirement: removed %v, %v; want true", removed, err)
		}
		if !refused(t, tokens, first) || !refused(t, tokens, old) {
			t.Error("a token of the retired key still resolves")
		}
		if refused(t, tokens, second) {
			t.Error("a token of the remaining key is refused")
		}
		// The retired key left the settings too, and is not imported again.
		if n := dbtest.Must(c.Setting.Query().Where(setting.Key(auth.SigningKeySetting)).Count(dbtest.Sys)); n != 0 {
			t.Errorf("the retired settings key is still stored")
		}
		again, err := auth.Keys(ctx, c)
		if err != nil || len(again) != 1 || again[0].ID != added.ID {
			t.Errorf("key set after retirement %v, %v; want only %s", again, err, added.ID)
		}
	})
}

// TestUnknownKidReloadIsRateLimited: a token naming a kid the set lacks
// reloads the set at most once every KeysEvery, so a flood of forged kids
// costs the database one query per interval.
func TestUnknownKidReloadIsRateLimited(t *testing.T) {
	c, stmts := openCounted(t, dbtest.SQLite(t))
	ctx := context.Background()
	conf := dbtest.NewTenant(t, c, "O", "Sofa").Confs[0]
	signer, err := auth.OpenSigner(ctx, c, "")
	if err != nil {
		t.Fatal(err)
	}
	tokens := auth.NewTokens(c, signer)
	_, rec := dbtest.OpenAPI(t, tokens, conf.ID)
	forge := func(kid string) string {
		tok := jwtlib.NewWithClaims(jwtlib.SigningMethodHS256, auth.Claims{Kind: viewer.KindOpenAPI,
			RegisteredClaims: jwtlib.RegisteredClaims{Issuer: auth.Issuer, Subject: strconv.Itoa(rec.ID)}})
		tok.Header["kid"] = kid
		s, err := tok.SignedString([]byte("forged-forged-forged-forged-key!"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	signer.ForgetReload()
	stmts.take()
	for i := range 50 {
		if !refused(t, tokens, forge("forged"+strconv.Itoa(i))) {
			t.Fatal("a forged kid resolved")
		}
	}
	loads := 0
	for _, s := range stmts.take() {
		if strings.Contains(s, "signing_keys") {
			loads++
		}
	}
	if loads != 1 {
		t.Errorf("50 forged kids read the key set %d times; want once", loads)
	}
}

// TestTokenTTL: a token created with a TTL carries its exp, resolves to a
// viewer whose Expires is exp, and is refused as expired from exp plus the
// leeway on; without a TTL there is no exp.
func TestTokenTTL(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		ctx := context.Background()
		conf := dbtest.NewTenant(t, c, "O", "Sofa").Confs[0]
		signer, err := auth.OpenSigner(ctx, c, "")
		if err != nil {
			t.Fatal(err)
		}
		tokens := auth.NewTokens(c, signer)
		now := time.Now()
		tokens.SetClock(func() time.Time { return now })
		jwt, rec := dbtest.OpenAPI(t, tokens, conf.ID, auth.TTL(time.Hour))
		exp := now.Add(time.Hour).Truncate(time.Second)
		if rec.ExpiresAt == nil || !rec.ExpiresAt.Equal(exp) {
			t.Fatalf("record expires_at %v; want %v", rec.ExpiresAt, exp)
		}
		var claims auth.Claims
		if _, _, err := jwtlib.NewParser().ParseUnverified(jwt, &claims); err != nil || claims.ExpiresAt == nil || !claims.ExpiresAt.Equal(exp) {
			t.Fatalf("JWT exp %v (%v); want %v", claims.ExpiresAt, err, exp)
		}
		v, err := tokens.Resolve(ctx, jwt)
		if err != nil {
			t.Fatal(err)
		}
		const leeway = 5 * time.Second
		if !v.Expires.Equal(exp) {
			t.Errorf("viewer expires %v; want the exp %v", v.Expires, exp)
		}
		now = exp.Add(leeway - time.Millisecond)
		if _, err := tokens.Resolve(ctx, jwt); err != nil {
			t.Errorf("just before exp+leeway: %v", err)
		}
		now = exp.Add(leeway)
		if _, err := tokens.Resolve(ctx, jwt); err == nil || !strings.Contains(err.Error(), "expired") {
			t.Errorf("at exp+leeway: %v; want token expired", err)
		}
		forever, rec2 := dbtest.Dashboard(t, tokens, conf.OwnerID)
		now = now.Add(24 * 365 * time.Hour)
		v, err = tokens.Resolve(ctx, forever)
		if err != nil || rec2.ExpiresAt != nil || !v.Expires.IsZero() {
			t.Errorf("token without TTL a year on: %v, expires_at %v, viewer expires %v; want no expiry", err, rec2.ExpiresAt, v.Expires)
		}
	})
}

// TestRetireReachesServer: on PostgreSQL a serving process hears a
// rotation and a retirement made by another process at once (well within
// KeysEvery): a cached token of the retired key stops resolving, and the
// new key signs the demo's and any other token it mints.
func TestRetireReachesServer(t *testing.T) {
	url := dbtest.Postgres(t)
	c := dbtest.Open(t, url)
	ctx := context.Background()
	conf := dbtest.NewTenant(t, c, "O", "Sofa").Confs[0]
	signer, err := auth.OpenSigner(ctx, c, "")
	if err != nil {
		t.Fatal(err)
	}
	tokens := auth.NewTokens(c, signer)
	serve(t, tokens, url)
	waitLive(t, tokens)
	jwt, _ := dbtest.OpenAPI(t, tokens, conf.ID)
	if refused(t, tokens, jwt) || refused(t, tokens, jwt) {
		t.Fatal("a fresh token was refused")
	}
	if tokens.CacheLen() != 1 {
		t.Fatalf("cache holds %d JWTs; want 1", tokens.CacheLen())
	}
	other := dbtest.Open(t, url)
	start := time.Now()
	added, err := auth.RotateKey(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rotation reaching the server", func() bool {
		ks := signer.Keys()
		return ks[len(ks)-1].ID == added.ID
	})
	if err := auth.RetireKey(ctx, other, kidOf(t, jwt)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the retirement reaching the server", func() bool { return refused(t, tokens, jwt) })
	if d := time.Since(start); d >= auth.KeysEvery {
		t.Errorf("the server took %v to hear the key changes; want at once (under %v)", d, auth.KeysEvery)
	}
	fresh, _ := dbtest.OpenAPI(t, tokens, conf.ID)
	if kidOf(t, fresh) != added.ID || refused(t, tokens, fresh) {
		t.Errorf("a token minted after the rotation: kid %s, refused %v; want %s, resolving", kidOf(t, fresh), refused(t, tokens, fresh), added.ID)
	}
}
