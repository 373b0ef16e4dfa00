package auth_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jwtlib "github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/pglisten"
	"github.com/configurator/catalogue/internal/viewer"
)

// statements records the SQL statements of a client opened by openCounted.
type statements struct {
	mu   sync.Mutex
	list []string
}

func (s *statements) log(args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, fmt.Sprint(args...))
}

// take returns the statements since the last take.
func (s *statements) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.list
	s.list = nil
	return l
}

// openCounted opens and migrates url and returns a client whose every
// statement (transactions included) is recorded in the returned list.
func openCounted(t *testing.T, url string) (*ent.Client, *statements) {
	s := &statements{}
	c := dbtest.Open(t, url, ent.Log(s.log))
	return c.Debug(), s
}

// serve runs tok's background work on url until the test ends, as the
// server does, with a listener of its own (on PostgreSQL), which edit
// may change before it starts.
func serve(t *testing.T, tok *auth.Tokens, url string, edit ...func(*pglisten.Listener)) *pglisten.Listener {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	lis, err := pglisten.New(url, log)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edit {
		e(lis)
	}
	tok.Listen(lis, log)
	t.Cleanup(lis.Start(ctx))
	go func() { done <- tok.Run(ctx, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return lis
}

// eventually polls cond for up to two seconds: the time a notification
// may take to arrive is a correctness bound, not a performance one.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 2s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitLive waits until tok's listener is connected and its cache answers.
func waitLive(t *testing.T, tok *auth.Tokens) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !tok.CacheLive() {
		if time.Now().After(deadline) {
			t.Fatal("the token cache did not come on within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// newConfigurator creates an owner with a configurator and returns the
// configurator.
func newConfigurator(t *testing.T, c *ent.Client) *ent.Configurator {
	return dbtest.NewTenant(t, c, "O", "Sofa").Confs[0]
}

// mint creates Open API tokens of conf through tok.
func mint(t *testing.T, tok *auth.Tokens, conf *ent.Configurator, n int) ([]string, []*ent.APIToken) {
	t.Helper()
	var jwts []string
	var recs []*ent.APIToken
	for range n {
		jwt, rec := dbtest.OpenAPI(t, tok, conf.ID)
		jwts, recs = append(jwts, jwt), append(recs, rec)
	}
	return jwts, recs
}

// refused reports whether tok refuses jwt as unauthenticated; any other
// error fails the test.
func refused(t *testing.T, tok *auth.Tokens, jwt string) bool {
	t.Helper()
	_, err := tok.Resolve(context.Background(), jwt)
	if err != nil && apperr.KindOf(err) != apperr.Unauthenticated {
		t.Fatalf("Resolve: %v; want a viewer or Unauthenticated", err)
	}
	return err != nil
}

// TestResolveFromCache: once a JWT has resolved, resolving it again on
// PostgreSQL issues no SQL at all; on SQLite (no cache, see Tokens) it
// reads the token record and nothing else. Neither writes.
func TestResolveFromCache(t *testing.T) {
	perResolve := map[string]int{"sqlite": 1, "postgres": 0}
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c, stmts := openCounted(t, url)
			tok := dbtest.Tokens(c)
			serve(t, tok, url)
			if b.Name == "postgres" {
				waitLive(t, tok)
			}
			conf := dbtest.NewTenant(t, c, "O", "Sofa").Confs[0]
			jwts, recs := mint(t, tok, conf, 1)
			want := viewer.Viewer{OwnerID: conf.OwnerID, Kind: viewer.KindOpenAPI, ConfiguratorID: conf.ID, TokenID: recs[0].ID}

			stmts.take()
			v, err := tok.Resolve(context.Background(), jwts[0])
			if err != nil || *v != want {
				t.Fatalf("Resolve = %+v, %v; want %+v", v, err, want)
			}
			if got := stmts.take(); len(got) != 1 || !strings.Contains(got[0], "SELECT") {
				t.Errorf("first Resolve ran %q; want one SELECT", got)
			}
			for i := range 3 {
				v, err := tok.Resolve(context.Background(), jwts[0])
				if err != nil || *v != want {
					t.Fatalf("Resolve #%d = %+v, %v; want %+v", i+2, v, err, want)
				}
				v.OwnerID = -1 // a caller's change must not reach the cache
				got := stmts.take()
				if len(got) != perResolve[b.Name] {
					t.Errorf("warm Resolve ran %d statements %q; want %d", len(got), got, perResolve[b.Name])
				}
				for _, s := range got {
					if !strings.Contains(s, "SELECT") {
						t.Errorf("Resolve wrote: %s", s)
					}
				}
			}

			// A JWT signed with another key is refused on every try, never
			// cached.
			n := tok.CacheLen()
			foreign, err := auth.NewSigner([]byte(strings.Repeat("x", 32))).Mint(recs[0].ID, viewer.KindOpenAPI, time.Now(), time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if !refused(t, tok, foreign) {
					t.Fatal("a JWT signed with another key resolved")
				}
			}
			if tok.CacheLen() != n {
				t.Errorf("cache grew from %d to %d entries on a bad signature", n, tok.CacheLen())
			}
			if got := stmts.take(); len(got) != 0 {
				t.Errorf("a bad signature ran %q; want no SQL", got)
			}
		})
	}
}

// TestRevokeReachesReplicas: two serving processes on one PostgreSQL
// database both cache a token; a revocation through a third client (as
// `server token revoke` is) or through either one is refused by both.
// Revocations in another schema of the same database do not evict.
func TestRevokeReachesReplicas(t *testing.T) {
	url := dbtest.Postgres(t)
	signer := auth.NewSigner(dbtest.Key)
	cA := dbtest.Open(t, url)
	a := auth.NewTokens(cA, signer)
	cB, stmtsB := openCounted(t, url)
	bb := auth.NewTokens(cB, signer)
	cli := auth.NewTokens(dbtest.Open(t, url), signer)
	serve(t, a, url)
	serve(t, bb, url)
	waitLive(t, a)
	waitLive(t, bb)

	conf := dbtest.NewTenant(t, cA, "O", "Sofa").Confs[0]
	jwts, recs := mint(t, cli, conf, 4)
	for _, tok := range []*auth.Tokens{a, bb} {
		for _, jwt := range jwts {
			if refused(t, tok, jwt) {
				t.Fatal("a fresh token was refused")
			}
		}
	}
	stmtsB.take()
	for _, jwt := range jwts {
		if refused(t, bb, jwt) {
			t.Fatal("a fresh token was refused")
		}
	}
	if got := stmtsB.take(); len(got) != 0 {
		t.Fatalf("replica B ran %q for cached tokens; want no SQL", got)
	}

	ctx := context.Background()
	if err := cli.Revoke(ctx, recs[0].ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replica A refuses a token revoked by another client", func() bool { return refused(t, a, jwts[0]) })
	eventually(t, "replica B refuses a token revoked by another client", func() bool { return refused(t, bb, jwts[0]) })

	if err := a.Revoke(ctx, recs[1].ID); err != nil {
		t.Fatal(err)
	}
	if !refused(t, a, jwts[1]) {
		t.Error("the revoking replica still accepts the token")
	}
	eventually(t, "replica B refuses a token revoked by replica A", func() bool { return refused(t, bb, jwts[1]) })

	// The same id revoked in another schema: B keeps its entry. A later
	// revocation of its own is delivered after it, so once B has
	// handled that one it has handled the foreign one too.
	db := dbtest.SQL(t, url)
	if _, err := db.Exec(`SELECT pg_notify($1, $2)`, auth.RevokeChannel, fmt.Sprintf("someone_else:%d", recs[2].ID)); err != nil {
		t.Fatal(err)
	}
	if err := cli.Revoke(ctx, recs[3].ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replica B refuses a revoked token", func() bool { return refused(t, bb, jwts[3]) })
	stmtsB.take()
	if refused(t, bb, jwts[2]) {
		t.Fatal("a token revoked in another schema was refused")
	}
	if got := stmtsB.take(); len(got) != 0 {
		t.Errorf("a revocation in another schema evicted token %d: Resolve ran %q", recs[2].ID, got)
	}
}

// TestListenerReconnect: while the listener's connection is down the cache
// does not answer, so a revocation committed meanwhile is refused at
// once; when it is back the cache starts empty (the revocation of a token
// cached before the loss went unheard) and then works again.
func TestListenerReconnect(t *testing.T) {
	url := dbtest.Postgres(t)
	signer := auth.NewSigner(dbtest.Key)
	c, stmts := openCounted(t, url)
	tok := auth.NewTokens(c, signer)
	var hold atomic.Bool
	release := make(chan struct{})
	lis := serve(t, tok, url, func(l *pglisten.Listener) {
		l.Dial = func(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
			if hold.Load() {
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return pgx.ConnectConfig(ctx, cfg)
		}
	})
	waitLive(t, tok)
	cli := auth.NewTokens(dbtest.Open(t, url), signer)
	jwts, recs := mint(t, cli, dbtest.NewTenant(t, c, "O", "Sofa").Confs[0], 4)
	for _, jwt := range jwts {
		if refused(t, tok, jwt) {
			t.Fatal("a fresh token was refused")
		}
	}

	db := dbtest.SQL(t, url)
	hold.Store(true)
	if _, err := db.Exec(`SELECT pg_terminate_backend($1)`, int64(lis.PID())); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the cache goes off when its listener's connection is lost", func() bool { return !tok.CacheLive() })

	ctx := context.Background()
	for _, rec := range recs[:2] {
		if err := cli.Revoke(ctx, rec.ID); err != nil {
			t.Fatal(err)
		}
	}
	if !refused(t, tok, jwts[0]) {
		t.Error("a token revoked while the listener was down was accepted")
	}
	stmts.take()
	for range 2 {
		if refused(t, tok, jwts[2]) {
			t.Fatal("a valid token was refused while the listener was down")
		}
	}
	if got := stmts.take(); len(got) != 2 {
		t.Errorf("two Resolves while the listener was down ran %q; want a read each", got)
	}

	hold.Store(false)
	close(release)
	waitLive(t, tok)
	if !refused(t, tok, jwts[1]) {
		t.Error("a token cached before the loss and revoked during it was accepted after reconnecting")
	}
	stmts.take()
	for i := range 2 {
		if refused(t, tok, jwts[3]) {
			t.Fatal("a valid token was refused after reconnecting")
		}
		if got, want := len(stmts.take()), 1-i; got != want {
			t.Errorf("Resolve #%d after reconnecting ran %d statements; want %d", i+1, got, want)
		}
	}
	if err := cli.Revoke(ctx, recs[3].ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the reconnected listener hears a revocation", func() bool { return refused(t, tok, jwts[3]) })
}

// TestSQLiteRevokeFromAnotherClient: on SQLite the CLI revokes through a
// connection of its own (in its own process); the serving process refuses
// the token from its very next request.
func TestSQLiteRevokeFromAnotherClient(t *testing.T) {
	url := dbtest.SQLite(t)
	signer := auth.NewSigner(dbtest.Key)
	c := dbtest.Open(t, url)
	tok := auth.NewTokens(c, signer)
	serve(t, tok, url)
	cli := auth.NewTokens(dbtest.Open(t, url), signer)
	jwts, recs := mint(t, cli, dbtest.NewTenant(t, c, "O", "Sofa").Confs[0], 1)
	for range 2 {
		if refused(t, tok, jwts[0]) {
			t.Fatal("a fresh token was refused")
		}
	}
	if err := cli.Revoke(context.Background(), recs[0].ID); err != nil {
		t.Fatal(err)
	}
	if !refused(t, tok, jwts[0]) {
		t.Error("the next Resolve after a revocation by another client accepted the token")
	}
}

// TestLastUsed: Resolve only notes a use; the flush writes last_used_at
// (the last use of each token, never moving it back), keeps what it
// could not write for the next flush, and Run flushes when it stops.
func TestLastUsed(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c, stmts := openCounted(t, url)
			tok := dbtest.Tokens(c)
			t0 := time.Now().Truncate(time.Second)
			now := t0
			tok.SetClock(func() time.Time { return now })
			tok.SetFlushEvery(time.Hour)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tok.Run(ctx, slog.New(slog.NewTextHandler(t.Output(), nil))) }()
			stop := sync.OnceValue(func() error {
				cancel()
				return <-done
			})
			defer stop()
			jwts, recs := mint(t, tok, dbtest.NewTenant(t, c, "O", "Sofa").Confs[0], 2)
			lastUsed := func(i int) *time.Time {
				t.Helper()
				return dbtest.Must(c.APIToken.Get(dbtest.Sys, recs[i].ID)).LastUsedAt
			}
			same := func(got *time.Time, want time.Time) bool { return got != nil && got.Equal(want) }

			stmts.take()
			for i := range 3 {
				now = t0.Add(time.Duration(i) * time.Second)
				if refused(t, tok, jwts[0]) {
					t.Fatal("a fresh token was refused")
				}
			}
			for _, s := range stmts.take() {
				if !strings.Contains(s, "SELECT") {
					t.Errorf("Resolve wrote: %s", s)
				}
			}
			if got := lastUsed(0); got != nil {
				t.Fatalf("last_used_at = %v before any flush; want NULL", got)
			}

			cctx, ccancel := context.WithCancel(context.Background())
			ccancel()
			if err := tok.FlushUsage(cctx); err == nil {
				t.Fatal("a flush with a canceled context succeeded")
			}
			if err := tok.FlushUsage(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got, want := lastUsed(0), t0.Add(2*time.Second); !same(got, want) {
				t.Errorf("last_used_at = %v after the flush; want %v (the last use)", got, want)
			}
			if got := lastUsed(1); got != nil {
				t.Errorf("an unused token's last_used_at = %v; want NULL", got)
			}

			// An older use, flushed later (another replica's), is ignored.
			other := dbtest.Tokens(c)
			other.SetClock(func() time.Time { return t0 })
			if refused(t, other, jwts[0]) {
				t.Fatal("a fresh token was refused")
			}
			if err := other.FlushUsage(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got, want := lastUsed(0), t0.Add(2*time.Second); !same(got, want) {
				t.Errorf("last_used_at = %v after an older use was flushed; want %v", got, want)
			}

			// Stopping Run writes what is noted.
			now = t0.Add(time.Minute)
			if refused(t, tok, jwts[1]) {
				t.Fatal("a fresh token was refused")
			}
			if err := stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := lastUsed(1); !same(got, now) {
				t.Errorf("last_used_at = %v after Run stopped; want %v", got, now)
			}
		})
	}
}

// TestCachedExpiry: a cached JWT with an exp stops resolving exactly when
// verifying it would fail (exp plus the leeway), without SQL either way.
func TestCachedExpiry(t *testing.T) {
	url := dbtest.Postgres(t)
	c, stmts := openCounted(t, url)
	tok := dbtest.Tokens(c)
	t0 := time.Now().Truncate(time.Second)
	now := t0
	tok.SetClock(func() time.Time { return now })
	serve(t, tok, url)
	waitLive(t, tok)
	_, recs := mint(t, tok, dbtest.NewTenant(t, c, "O", "Sofa").Confs[0], 1)
	exp := t0.Add(time.Minute)
	jwt, err := jwtlib.NewWithClaims(jwtlib.SigningMethodHS256, auth.Claims{
		Kind: viewer.KindOpenAPI,
		RegisteredClaims: jwtlib.RegisteredClaims{
			Issuer:    auth.Issuer,
			Subject:   strconv.Itoa(recs[0].ID),
			ExpiresAt: jwtlib.NewNumericDate(exp),
		},
	}).SignedString(dbtest.Key)
	if err != nil {
		t.Fatal(err)
	}
	if refused(t, tok, jwt) {
		t.Fatal("a JWT before its exp was refused")
	}
	const leeway = 5 * time.Second
	for _, tc := range []struct {
		at      time.Time
		refused bool
	}{
		{t0, false},
		{exp, false},
		{exp.Add(leeway - time.Second), false},
		{exp.Add(leeway), true},
	} {
		now = tc.at
		stmts.take()
		if got := refused(t, tok, jwt); got != tc.refused {
			t.Errorf("at exp%+v: refused = %v; want %v", tc.at.Sub(exp), got, tc.refused)
		}
		if got := stmts.take(); len(got) != 0 {
			t.Errorf("at exp%+v: Resolve ran %q; want no SQL", tc.at.Sub(exp), got)
		}
	}
}
