package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/share"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/testkit"
)

// fixture is one owner with a configurator, the operations over a memory
// file store, and the contexts of its two kinds of token.
type fixture struct {
	c                *ent.Client
	app              *app.App
	store            *storage.Memory
	open, dash, peer context.Context
	conf             int
}

func newFixture(t *testing.T, c *ent.Client) *fixture {
	a, b := dbtest.NewTenant(t, c, "A", "Sofa"), dbtest.NewTenant(t, c, "B")
	store := storage.NewMemory()
	files := &storage.Files{Store: store, BaseURL: "http://files.test/"}
	return &fixture{
		c: c, app: app.New(c, files, share.New("")), store: store, conf: a.Confs[0].ID,
		open: a.Open(0, 1), dash: a.Dash(2), peer: b.Dash(3),
	}
}

// pngImage is a small valid PNG (testkit.PNG), as an upload reads it.
func pngImage(*testing.T) io.Reader { return bytes.NewReader(testkit.PNG(120, 80, 0)) }

// fault checks that err is an apperr of kind about field.
func fault(t *testing.T, what string, err error, kind apperr.Kind, field string) {
	t.Helper()
	es := apperr.Errors(err)
	if len(es) == 0 || es[0].Kind != kind || es[0].Field != field {
		t.Fatalf("%s: %v; want %s about %q", what, err, kind, field)
	}
}

func (f *fixture) order(snapshot io.Reader, printMap ...io.Reader) app.CreateOrder {
	return app.CreateOrder{
		ConfiguratorID: f.conf, Price: 10, CustomerDetails: json.RawMessage(`{"name":"Ada"}`),
		ConfiguratorSummary: json.RawMessage(`{}`), Snapshot: snapshot, PrintMap: printMap,
	}
}

// TestCreateOrder checks that an order and its files are stored together
// or not at all.
func TestCreateOrder(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		_, err := f.app.CreateOrder(f.open, f.order(pngImage(t), pngImage(t), bytes.NewReader([]byte("not an image"))))
		fault(t, "a bad second print map", err, apperr.Invalid, "configurator_print_map[1]")
		if n := f.store.Len(); n != 0 {
			t.Errorf("a refused order left %d files", n)
		}
		if n := c.Order.Query().CountX(dbtest.Sys); n != 0 {
			t.Errorf("a refused order left %d orders", n)
		}

		other := f.order(pngImage(t))
		_, err = f.app.CreateOrder(f.peer, other)
		fault(t, "another owner's configurator", err, apperr.NotFound, "configurator_id")
		if n := f.store.Len(); n != 0 {
			t.Errorf("an order for another owner's configurator stored %d files", n)
		}

		id, err := f.app.CreateOrder(f.open, f.order(pngImage(t), pngImage(t), pngImage(t)))
		if err != nil {
			t.Fatal(err)
		}
		o := c.Order.GetX(f.open, id)
		if o.ConfiguratorSnapshot == nil || len(o.ConfiguratorPrintMap) != 2 || f.store.Len() != 3 {
			t.Errorf("order %+v with %d files; want a snapshot, 2 print maps and 3 files", o, f.store.Len())
		}
	})
}

// TestTextureFiles checks that a texture's files follow the texture:
// stored with it, replaced by an update, removed with it, and never left
// behind by a refused write.
func TestTextureFiles(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		_, err := f.app.CreateTexture(f.open, app.CreateTexture{Name: "Oak", File: pngImage(t)})
		fault(t, "an Open API token", err, apperr.Forbidden, "")
		if n := f.store.Len(); n != 0 {
			t.Fatalf("a forbidden texture stored %d files", n)
		}

		id, err := f.app.CreateTexture(f.dash, app.CreateTexture{Name: "Oak", File: pngImage(t), BumpFile: pngImage(t)})
		if err != nil {
			t.Fatal(err)
		}
		if n := f.store.Len(); n != 4 {
			t.Fatalf("a texture with a bump map stored %d files; want 4 (image, 2 thumbnails, bump map)", n)
		}
		old := c.Texture.GetX(f.dash, id)

		if err := f.app.UpdateTexture(f.dash, app.UpdateTexture{ID: id, File: pngImage(t), ClearBumpFile: true}); err != nil {
			t.Fatal(err)
		}
		now := c.Texture.GetX(f.dash, id)
		if *now.TextureFile == *old.TextureFile || now.BumpFile != nil || f.store.Len() != 3 {
			t.Errorf("after a new image and a cleared bump map: %+v with %d files; want a new image, no bump map, 3 files", now, f.store.Len())
		}

		err = f.app.UpdateTexture(f.peer, app.UpdateTexture{ID: id, File: pngImage(t)})
		fault(t, "another owner's texture", err, apperr.NotFound, "")
		if n := f.store.Len(); n != 3 {
			t.Errorf("a refused update left %d files; want the texture's 3", n)
		}

		if err := f.app.DeleteTexture(f.dash, app.DeleteTexture{ID: id}); err != nil {
			t.Fatal(err)
		}
		if n := f.store.Len(); n != 0 {
			t.Errorf("a deleted texture left %d files", n)
		}
	})
}

// TestIdempotentOrder checks that a key replays its order and refuses
// another request.
func TestIdempotentOrder(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		ctx := idempotencyContext(t, f.open, "key-1")
		first, err := f.app.CreateOrder(ctx, f.order(nil))
		if err != nil {
			t.Fatal(err)
		}
		again, err := f.app.CreateOrder(ctx, f.order(nil))
		if err != nil || again != first {
			t.Fatalf("a retry answered %d, %v; want order %d", again, err, first)
		}
		changed := f.order(nil)
		changed.Price = 11
		_, err = f.app.CreateOrder(ctx, changed)
		fault(t, "the key with another request", err, apperr.KeyReused, "")
	})
}

// idempotencyContext is ctx with the Idempotency-Key key, as the header's
// middleware puts it there for a request.
func idempotencyContext(t *testing.T, ctx context.Context, key string) context.Context {
	var got context.Context
	h := idempotency.Middleware(func(_ http.ResponseWriter, _ *http.Request, err error) { t.Fatal(err) }, 0)(
		http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Context() }))
	r := httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx)
	r.Header.Set(idempotency.Header, key)
	h.ServeHTTP(httptest.NewRecorder(), r)
	return got
}

// TestUpdateOrder checks the order update operation: the fields it sets
// change and the flags clear, in one transaction; a refused update (scope,
// bad input, another owner's order) changes nothing.
func TestUpdateOrder(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		id, err := f.app.CreateOrder(f.open, f.order(nil))
		if err != nil {
			t.Fatal(err)
		}
		status, invoice, shop := "shipped", "https://shop.example.com/i/9", "Oslo"
		if err := f.app.UpdateOrder(f.dash, app.UpdateOrder{ID: id, Status: &status, InvoiceURL: &invoice, OrderStorefront: &shop}); err != nil {
			t.Fatal(err)
		}
		if err := f.app.UpdateOrder(f.dash, app.UpdateOrder{ID: id, ClearOrderStorefront: true}); err != nil {
			t.Fatal(err)
		}
		o := c.Order.GetX(f.dash, id)
		if o.Status != "shipped" || o.InvoiceURL == nil || *o.InvoiceURL != invoice || o.OrderStorefront != nil {
			t.Errorf("order after two updates: %+v; want shipped, the invoice, no storefront", o)
		}
		other, long, ftp := "paid", strings.Repeat("s", 65), "ftp://x/1"
		fault(t, "an Open API token", f.app.UpdateOrder(f.open, app.UpdateOrder{ID: id, Status: &other}), apperr.Forbidden, "")
		fault(t, "another owner's order", f.app.UpdateOrder(f.peer, app.UpdateOrder{ID: id, Status: &other}), apperr.NotFound, "")
		fault(t, "a 65-character status", f.app.UpdateOrder(f.dash, app.UpdateOrder{ID: id, Status: &long}), apperr.Invalid, "status")
		fault(t, "an ftp invoice", f.app.UpdateOrder(f.dash, app.UpdateOrder{ID: id, InvoiceURL: &ftp}), apperr.Invalid, "invoice_url")
		// An explicit null clears what can be cleared and is refused
		// otherwise, after the scope: an Open API token is Forbidden first.
		nullStatus := app.UpdateOrder{ID: id, Nulls: []string{"status"}}
		fault(t, "a null status", f.app.UpdateOrder(f.dash, nullStatus), apperr.Invalid, "status")
		fault(t, "a null status from an Open API token", f.app.UpdateOrder(f.open, nullStatus), apperr.Forbidden, "")
		if got := c.Order.GetX(f.dash, id).Status; got != "shipped" {
			t.Errorf("status after refused updates = %q; want shipped", got)
		}
		if err := f.app.UpdateOrder(f.dash, app.UpdateOrder{ID: id, Nulls: []string{"invoice_url"}}); err != nil {
			t.Fatal(err)
		}
		if o := c.Order.GetX(f.dash, id); o.InvoiceURL != nil {
			t.Errorf("invoice after a null invoice_url = %q; want none", *o.InvoiceURL)
		}
	})
}
