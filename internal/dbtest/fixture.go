package dbtest

import (
	"context"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/viewer"
)

// Sys is a context that every privacy rule allows: fixtures write the rows
// of any owner through it, as the system does.
var Sys = privacy.DecisionContext(context.Background(), privacy.Allow)

// Key signs the tokens of Tokens, so that tests which mint a token and the
// handler that checks it agree without passing a key around.
var Key = []byte("0123456789abcdef0123456789abcdef")

// Tenant is an owner and its configurators: the rows that every other row
// of a test belongs to. It is the one owner/configurator fixture of the
// tests of every package.
type Tenant struct {
	*ent.Owner
	Confs []*ent.Configurator
}

// NewTenant creates the owner name with one configurator per entry of
// confs, in order.
func NewTenant(t testing.TB, c *ent.Client, name string, confs ...string) Tenant {
	t.Helper()
	tn := Tenant{Owner: Must(c.Owner.Create().SetName(name).Save(Sys))}
	for _, conf := range confs {
		tn.Confs = append(tn.Confs, Must(c.Configurator.Create().SetName(conf).SetOwnerID(tn.ID).Save(Sys)))
	}
	return tn
}

// Dash is a context of a dashboard viewer of the tenant, holding token
// tokenID: the caller of internal/app that has no request to carry it.
func (tn Tenant) Dash(tokenID int) context.Context {
	return viewer.NewContext(context.Background(), &viewer.Viewer{OwnerID: tn.ID, Kind: viewer.KindDashboard, TokenID: tokenID})
}

// Open is a context of an Open API viewer of the tenant's i-th
// configurator, holding token tokenID.
func (tn Tenant) Open(i, tokenID int) context.Context {
	return viewer.NewContext(context.Background(), &viewer.Viewer{OwnerID: tn.ID, Kind: viewer.KindOpenAPI,
		ConfiguratorID: tn.Confs[i].ID, TokenID: tokenID})
}

// Tokens is the token store of c, signing with Key.
func Tokens(c *ent.Client) *auth.Tokens {
	return auth.NewTokens(c, auth.NewSigner(Key))
}

// OpenAPI mints an Open API token of configurator conf through tokens and
// returns the JWT and its record.
func OpenAPI(t testing.TB, tokens *auth.Tokens, conf int, opts ...auth.CreateOption) (string, *ent.APIToken) {
	t.Helper()
	jwt, rec, err := tokens.CreateOpenAPI(context.Background(), conf, opts...)
	if err != nil {
		t.Fatalf("mint an Open API token of configurator %d: %v", conf, err)
	}
	return jwt, rec
}

// Dashboard mints a dashboard token of owner through tokens and returns
// the JWT and its record.
func Dashboard(t testing.TB, tokens *auth.Tokens, owner int, opts ...auth.CreateOption) (string, *ent.APIToken) {
	t.Helper()
	jwt, rec, err := tokens.CreateDashboard(context.Background(), owner, opts...)
	if err != nil {
		t.Fatalf("mint a dashboard token of owner %d: %v", owner, err)
	}
	return jwt, rec
}

// Postgres returns the URL of a fresh PostgreSQL database for a test that
// only PostgreSQL can run, and skips the test when TEST_DATABASE_URL is
// not set.
func Postgres(t testing.TB) string {
	t.Helper()
	bs := Backends()
	if len(bs) < 2 {
		t.Skipf("needs PostgreSQL: set %s", EnvPostgres)
	}
	return bs[1].URL(t)
}

// SQLite returns the URL of a fresh SQLite database, for a test that
// needs one database and no particular backend.
func SQLite(t testing.TB) string {
	return Backends()[0].URL(t)
}
