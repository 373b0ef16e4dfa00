package database_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
)

// TestMigrateExistingDatabase migrates a database that already has rows,
// and one whose schema is older than the code (a column missing): rows
// survive and the schema catches up.
func TestMigrateExistingDatabase(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := dbtest.Sys
			url := b.URL(t)
			c := dbtest.Open(t, url)
			o := dbtest.NewTenant(t, c, "A", "Sofa")
			conf := o.Confs[0]
			dbtest.Must(c.Order.Create().SetOwnerID(o.ID).SetConfiguratorID(conf.ID).SetPrice(12.5).
				SetCustomerDetails(json.RawMessage(`{"name":"Ann"}`)).SetConfiguratorSummary(json.RawMessage("{}")).Save(ctx))
			c.Close()

			// An older release had no order_storefront column.
			db := dbtest.SQL(t, url)
			if _, err := db.Exec(`ALTER TABLE orders DROP COLUMN order_storefront`); err != nil {
				t.Fatalf("simulate the old schema: %v", err)
			}
			db.Close()

			for i := 0; i < 2; i++ { // migrating twice changes nothing
				c, err := database.Open(context.Background(), url)
				if err != nil {
					t.Fatal(err)
				}
				if err := database.Migrate(context.Background(), c, url); err != nil {
					t.Fatalf("migrate an existing database: %v", err)
				}
				orders := dbtest.Must(c.Order.Query().All(ctx))
				var details bytes.Buffer // jsonb (PostgreSQL) writes spaces
				if len(orders) == 1 {
					json.Compact(&details, orders[0].CustomerDetails)
				}
				if len(orders) != 1 || orders[0].Price != 12.5 || details.String() != `{"name":"Ann"}` {
					t.Fatalf("after migration %d: orders %+v", i, orders)
				}
				if err := c.Order.UpdateOne(orders[0]).SetOrderStorefront("shop-1").Exec(ctx); err != nil {
					t.Fatalf("the restored column is not usable: %v", err)
				}
				c.Close()
			}
		})
	}
}

func TestOpenRejectsUnknownURLs(t *testing.T) {
	for _, u := range []string{"mysql://x", "sqlite://", "", "./file.db"} {
		if _, err := database.Open(context.Background(), u); err == nil {
			t.Errorf("Open(%q) succeeded; want an error", u)
		}
	}
	_, err := database.Open(context.Background(), "postgres://u:secret@127.0.0.1:1/db?connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("unreachable postgres: %v; want an error without the password", err)
	}
}

// TestMigrateJSONToJSONB migrates a PostgreSQL database of an older
// release, whose JSON columns were json (text kept as sent), to jsonb:
// the rows keep their values, in jsonb's form.
func TestMigrateJSONToJSONB(t *testing.T) {
	url := dbtest.Postgres(t)
	ctx := dbtest.Sys
	c := dbtest.Open(t, url)
	o := dbtest.NewTenant(t, c, "A", "Sofa")
	conf := o.Confs[0]
	dbtest.Must(c.Order.Create().SetOwnerID(o.ID).SetConfiguratorID(conf.ID).SetPrice(12.5).
		SetCustomerDetails(json.RawMessage(`{}`)).SetConfiguratorSummary(json.RawMessage("{}")).Save(ctx))
	dbtest.Must(c.ConfiguratorOption.Create().SetOwnerID(o.ID).SetConfiguratorID(conf.ID).SetTitle("Color").
		SetType("select").SetSettings(json.RawMessage(`{}`)).Save(ctx))
	c.Close()

	db := dbtest.SQL(t, url)
	columns := []string{"orders.customer_details", "orders.configurator_summary", "configurator_options.settings"}
	for _, col := range columns {
		table, column, _ := strings.Cut(col, ".")
		if _, err := db.Exec(fmt.Sprintf(`ALTER TABLE %s ALTER COLUMN %s TYPE json`, table, column)); err != nil {
			t.Fatalf("simulate the old schema: %v", err)
		}
	}
	for _, stmt := range []string{
		`UPDATE orders SET customer_details = '{"name": "Ann",  "age":3, "name": "Ada"}', configurator_summary = '{"qty": 2.50e1}'`,
		`UPDATE configurator_options SET settings = '{ "visible" : true, "a": [1, 2] }'`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("old rows: %v", err)
		}
	}

	c, err := database.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := database.Migrate(context.Background(), c, url); err != nil {
		t.Fatalf("migrate json to jsonb: %v", err)
	}
	for _, col := range columns {
		table, column, _ := strings.Cut(col, ".")
		var typ string
		if err := db.QueryRow(`SELECT data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2`,
			table, column).Scan(&typ); err != nil || typ != "jsonb" {
			t.Errorf("%s is %q (%v); want jsonb", col, typ, err)
		}
	}
	ord := dbtest.Must(c.Order.Query().Only(ctx))
	opt := dbtest.Must(c.ConfiguratorOption.Query().Only(ctx))
	for _, v := range []struct{ name, got, want string }{
		{"customer_details", string(ord.CustomerDetails), `{"age": 3, "name": "Ada"}`},
		{"configurator_summary", string(ord.ConfiguratorSummary), `{"qty": 25.0}`},
		{"settings", string(opt.Settings), `{"a": [1, 2], "visible": true}`},
	} {
		if v.got != v.want {
			t.Errorf("after migration %s = %s; want %s", v.name, v.got, v.want)
		}
	}
}

// TestLazyEdges loads edges of and to the records with JSON columns (an
// option, an order) lazily, each a query of its own, as a resolver that
// forgot to load them eagerly would: ent's edge queries are SELECT
// DISTINCT, which the json type of PostgreSQL could not answer.
func TestLazyEdges(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		ctx := dbtest.Sys
		o := dbtest.NewTenant(t, c, "A", "Sofa")
		conf := o.Confs[0]
		opt := dbtest.Must(c.ConfiguratorOption.Create().SetOwnerID(o.ID).SetConfiguratorID(conf.ID).SetTitle("Color").
			SetType("select").SetSettings(json.RawMessage(`{"visible":true}`)).Save(ctx))
		v := dbtest.Must(c.OptionVariation.Create().SetOwnerID(o.ID).SetConfiguratorOptionID(opt.ID).SetName("Red").Save(ctx))
		ord := dbtest.Must(c.Order.Create().SetOwnerID(o.ID).SetConfiguratorID(conf.ID).SetPrice(1).
			SetCustomerDetails(json.RawMessage(`{"name":"Ann"}`)).SetConfiguratorSummary(json.RawMessage("{}")).Save(ctx))

		if got := dbtest.Must(opt.QueryVariations().All(ctx)); len(got) != 1 || got[0].ID != v.ID {
			t.Errorf("option's variations: %v", got)
		}
		if got := dbtest.Must(opt.QueryConfigurator().Only(ctx)); got.ID != conf.ID {
			t.Errorf("option's configurator: %v", got)
		}
		if got := dbtest.Must(opt.QuerySets().All(ctx)); len(got) != 0 {
			t.Errorf("option's sets: %v", got)
		}
		if got := dbtest.Must(v.QueryOption().Only(ctx)); got.ID != opt.ID || string(got.Settings) == "" {
			t.Errorf("variation's option: %+v", got)
		}
		if got := dbtest.Must(conf.QueryOptions().All(ctx)); len(got) != 1 || got[0].ID != opt.ID {
			t.Errorf("configurator's options: %v", got)
		}
		if got := dbtest.Must(conf.QueryOrders().All(ctx)); len(got) != 1 || got[0].ID != ord.ID {
			t.Errorf("configurator's orders: %v", got)
		}
		if got := dbtest.Must(ord.QueryConfigurator().QueryOptions().QueryVariations().All(ctx)); len(got) != 1 {
			t.Errorf("order's configurator's options' variations: %v", got)
		}
	})
}

// TestGenericPlans checks that the service's PostgreSQL connections plan
// each prepared statement once (plan_cache_mode force_generic_plan), and
// that a URL naming plan_cache_mode keeps its own choice.
func TestGenericPlans(t *testing.T) {
	base := dbtest.Postgres(t)
	for _, c := range []struct{ param, want string }{
		{"", "force_generic_plan"},
		{"plan_cache_mode=auto", "auto"},
	} {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		if c.param != "" {
			u.RawQuery += "&" + c.param
		}
		db, _, err := database.OpenSQL(u.String())
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = db.QueryRow("SHOW plan_cache_mode").Scan(&got)
		db.Close()
		if err != nil || got != c.want {
			t.Errorf("URL with %q: plan_cache_mode %q (%v); want %q", c.param, got, err, c.want)
		}
	}
}
