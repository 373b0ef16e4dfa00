package database_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
)

// TestMigrateExistingDatabase migrates a database that already has rows,
// and one whose schema is older than the code (a column missing): rows
// survive and the schema catches up.
func TestMigrateExistingDatabase(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := privacy.DecisionContext(context.Background(), privacy.Allow)
			url := b.URL(t)
			c := dbtest.Open(t, url)
			o := dbtest.Must(c.Owner.Create().SetName("A").Save(ctx))
			conf := dbtest.Must(c.Configurator.Create().SetName("Sofa").SetOwnerID(o.ID).Save(ctx))
			dbtest.Must(c.Order.Create().SetOwnerID(o.ID).SetConfiguratorID(conf.ID).SetPrice(12.5).
				SetCustomerDetails(json.RawMessage(`{"name":"Ann"}`)).SetConfiguratorSummary(json.RawMessage("{}")).Save(ctx))
			c.Close()

			// An older release had no order_storefront column.
			db, _, err := database.OpenSQL(url)
			if err != nil {
				t.Fatal(err)
			}
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
				if len(orders) != 1 || orders[0].Price != 12.5 || string(orders[0].CustomerDetails) != `{"name":"Ann"}` {
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
