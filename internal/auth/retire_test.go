package auth_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"testing"
	"time"

	jwtlib "github.com/golang-jwt/jwt/v5"

	"github.com/configurator/catalogue/ent/apitoken"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/oidctest"
	"github.com/configurator/catalogue/internal/pglisten"
	"github.com/configurator/catalogue/internal/viewer"
)

// gate holds a listener's goroutine, so that a test decides what a
// serving process does before it handles the notifications sent
// meanwhile: they wait in order behind the gate.
type gate struct {
	t       *testing.T
	url     string
	channel string
	alive   chan struct{}
	entered chan struct{}
	release chan struct{}
	passed  chan struct{}
}

// newGate adds a gate to l, on a channel of its own (channels are
// database-wide).
func newGate(t *testing.T, url string, l *pglisten.Listener) *gate {
	b := make([]byte, 6)
	rand.Read(b)
	g := &gate{t: t, url: url, channel: "authtest_gate_" + hex.EncodeToString(b),
		alive: make(chan struct{}, 1), entered: make(chan struct{}), release: make(chan struct{}), passed: make(chan struct{}, 1)}
	l.Add(pglisten.Part{
		Table: apitoken.Table,
		Channels: map[string]func(context.Context, string, string){
			g.channel: func(_ context.Context, _, payload string) {
				switch payload {
				case "hold":
					close(g.entered)
					<-g.release
				case "pass":
					g.passed <- struct{}{}
				}
			},
		},
		Alive: func(time.Time) {
			select {
			case g.alive <- struct{}{}:
			default:
			}
		},
	})
	return g
}

func (g *gate) notify(payload string) {
	g.t.Helper()
	if _, err := dbtest.SQL(g.t, g.url).Exec(`SELECT pg_notify($1, $2)`, g.channel, payload); err != nil {
		g.t.Fatal(err)
	}
}

// wait waits on ch, which the listener signals within about a second.
func (g *gate) wait(ch <-chan struct{}, what string) {
	g.t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		g.t.Fatalf("%s: not within 10 s", what)
	}
}

// hold stops the listener's goroutine, right after a heartbeat so that
// the hold ends well before the next one is due.
func (g *gate) hold() {
	g.t.Helper()
	for len(g.alive) > 0 {
		<-g.alive
	}
	g.wait(g.alive, "a heartbeat")
	g.notify("hold")
	g.wait(g.entered, "the listener holding")
}

// open lets the listener go on, and returns once it has handled every
// notification sent before.
func (g *gate) open() {
	g.t.Helper()
	close(g.release)
	g.notify("pass")
	g.wait(g.passed, "the listener handling what was sent while it was held")
}

// TestRetiredKeyWhateverComesFirst: a serving process caches a token of
// its first key; another process rotates the keys and retires that key.
// Before the serving process handles the notifications of those changes,
// a request names a kid it does not know (a token of the new key, or a
// forged kid), which makes it reload the key set. The token of the
// retired key is refused from then on: after that reload, and after the
// notifications, which then find the key set already reloaded. On SQLite
// (no cache, no notifications) it is refused after the reload the kid
// causes.
func TestRetiredKeyWhateverComesFirst(t *testing.T) {
	for _, b := range dbtest.Backends() {
		for _, trigger := range []string{"a token of the new key", "a forged kid"} {
			t.Run(b.Name+"/"+trigger, func(t *testing.T) {
				ctx := context.Background()
				url := b.URL(t)
				c := dbtest.Open(t, url)
				conf := dbtest.NewTenant(t, c, "O", "Sofa").Confs[0]
				signer, err := auth.OpenSigner(ctx, c, "")
				if err != nil {
					t.Fatal(err)
				}
				tokens := auth.NewTokens(c, signer)
				var g *gate
				var lis *pglisten.Listener
				if b.Name == "postgres" {
					// The listener alone: no Run, whose reload every
					// KeysEvery could come first.
					log := slog.New(slog.NewTextHandler(t.Output(), nil))
					if lis, err = pglisten.New(url, log); err != nil {
						t.Fatal(err)
					}
					tokens.Listen(lis, log)
					g = newGate(t, url, lis)
					lctx, cancel := context.WithCancel(ctx)
					t.Cleanup(cancel)
					t.Cleanup(lis.Start(lctx))
					waitLive(t, tokens)
				}
				jwt, rec := dbtest.OpenAPI(t, tokens, conf.ID)
				if refused(t, tokens, jwt) || refused(t, tokens, jwt) {
					t.Fatal("a fresh token was refused")
				}
				pid := lis.PID()
				if g != nil {
					g.hold()
				}

				// `server keys rotate`, then `retire`, in another process.
				other := dbtest.Open(t, url)
				added, err := auth.RotateKey(ctx, other)
				if err != nil {
					t.Fatal(err)
				}
				if err := auth.RetireKey(ctx, other, kidOf(t, jwt)); err != nil {
					t.Fatal(err)
				}
				signer.ForgetReload()
				switch trigger {
				case "a token of the new key":
					cli, err := auth.OpenSigner(ctx, other, "")
					if err != nil {
						t.Fatal(err)
					}
					fresh, _ := dbtest.OpenAPI(t, auth.NewTokens(other, cli), conf.ID)
					if kidOf(t, fresh) != added.ID || refused(t, tokens, fresh) {
						t.Fatal("a token of the new key was refused")
					}
				case "a forged kid":
					forged := jwtlib.NewWithClaims(jwtlib.SigningMethodHS256, auth.Claims{Kind: viewer.KindOpenAPI,
						RegisteredClaims: jwtlib.RegisteredClaims{Issuer: auth.Issuer, Subject: strconv.Itoa(rec.ID)}})
					forged.Header["kid"] = "forged"
					s, err := forged.SignedString([]byte("forged-forged-forged-forged-key!"))
					if err != nil {
						t.Fatal(err)
					}
					if !refused(t, tokens, s) {
						t.Fatal("a forged kid resolved")
					}
				}
				if ks := signer.Keys(); len(ks) != 1 || ks[0].ID != added.ID {
					t.Fatalf("the server holds keys %v after the reload; want only %s", ks, added.ID)
				}
				if !refused(t, tokens, jwt) {
					t.Error("after the reload a kid caused, a token of the retired key resolved")
				}
				if g != nil {
					g.open()
					if lis.PID() != pid {
						t.Fatal("the listener reconnected while held (its cache started again empty): the interleaving was not reproduced")
					}
					// A hold longer than the cache's 2 s without a heartbeat
					// only pauses it: the next heartbeat lets it answer again,
					// with what it held.
					waitLive(t, tokens)
				}
				if !refused(t, tokens, jwt) {
					t.Error("after the notifications of the rotation and the retirement, a token of the retired key resolved")
				}
			})
		}
	}
}

// TestProviderKeyRetired: a serving process caches a provider token;
// the provider rotates its keys and stops publishing the old ones. When
// the server fetches the provider's keys again (here because a token of
// the new key names a kid it does not know; every 10 minutes in any
// case), the cached token of the dropped key is refused.
func TestProviderKeyRetired(t *testing.T) {
	idp := oidctest.Start(t, providerClients)
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			tokens := providerTokens(t, dbtest.Open(t, url), idp)
			serve(t, tokens, url)
			if b.Name == "postgres" {
				waitLive(t, tokens)
			}
			old := idp.Token(t, "dash", auth.ScopeDashboard, "")
			if refused(t, tokens, old) || refused(t, tokens, old) {
				t.Fatal("a provider token was refused")
			}
			if b.Name == "postgres" && tokens.CacheLen() != 1 {
				t.Fatalf("the cache holds %d tokens; want 1", tokens.CacheLen())
			}
			idp.Rotate(t)
			idp.Retire(t)
			fresh := idp.Token(t, "dash", auth.ScopeDashboard, "")
			if kidOf(t, fresh) == kidOf(t, old) || refused(t, tokens, fresh) {
				t.Fatal("a token of the provider's new key was refused")
			}
			if b.Name == "postgres" {
				waitLive(t, tokens)
			}
			if !refused(t, tokens, old) {
				t.Error("a token of a key the provider no longer publishes resolved after its keys were fetched again")
			}
		})
	}
}
