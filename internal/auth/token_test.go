package auth_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

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

// newConfigurator creates an owner with a configurator and returns the
// configurator.
func newConfigurator(t *testing.T, c *ent.Client) *ent.Configurator {
	t.Helper()
	ctx := privacy.DecisionContext(context.Background(), privacy.Allow)
	o := dbtest.Must(c.Owner.Create().SetName("O").Save(ctx))
	return dbtest.Must(c.Configurator.Create().SetName("Sofa").SetOwnerID(o.ID).Save(ctx))
}

// mint creates Open API tokens of conf through tok.
func mint(t *testing.T, tok *auth.Tokens, conf *ent.Configurator, n int) ([]string, []*ent.APIToken) {
	t.Helper()
	var jwts []string
	var recs []*ent.APIToken
	for range n {
		jwt, rec, err := tok.CreateOpenAPI(context.Background(), conf.ID)
		if err != nil {
			t.Fatal(err)
		}
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

// TestLastUsed: Resolve only notes a use; the flush writes last_used_at
// (the last use of each token, never moving it back), keeps what it
// could not write for the next flush, and Run flushes when it stops.
func TestLastUsed(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c, stmts := openCounted(t, url)
			tok := auth.NewTokens(c, auth.NewSigner(testKey))
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
			jwts, recs := mint(t, tok, newConfigurator(t, c), 2)
			lastUsed := func(i int) *time.Time {
				t.Helper()
				sys := privacy.DecisionContext(context.Background(), privacy.Allow)
				return dbtest.Must(c.APIToken.Get(sys, recs[i].ID)).LastUsedAt
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
			other := auth.NewTokens(c, auth.NewSigner(testKey))
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
