package database_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
)

// TestConcurrentMigrations starts as many migrations of one empty
// database at once as replicas starting together would (each with its
// own client, as each replica has): every one succeeds, and the schema
// is exactly the one a single migration makes, triggers included.
func TestConcurrentMigrations(t *testing.T) {
	const replicas = 4
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			reference := b.URL(t)
			dbtest.Open(t, reference)

			// Each replica's client is opened first, one after the other
			// (several processes creating one new SQLite file at the same
			// instant is not what this tests); their migrations then start
			// together.
			shared := b.URL(t)
			clients := make([]*ent.Client, replicas)
			for i := range clients {
				c, err := database.Open(ctx, shared)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				clients[i] = c
			}
			start := make(chan struct{})
			errs := make([]error, replicas)
			var wg sync.WaitGroup
			for i, c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs[i] = database.Migrate(ctx, c, shared)
				}()
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("replica %d: %v", i, err)
				}
			}
			if t.Failed() {
				return
			}

			if got, want := dbtest.Schema(t, shared), dbtest.Schema(t, reference); got != want {
				t.Errorf("schema after %d concurrent migrations differs from one migration's:\n got %s\nwant %s", replicas, got, want)
			}
			// The schema works: an order is written and counted once by
			// the triggers, in its day and its month too.
			c := dbtest.Open(t, shared)
			sys := dbtest.Sys
			o := dbtest.NewTenant(t, c, "A", "Sofa")
			conf := o.Confs[0]
			dbtest.Must(c.Order.Create().SetOwnerID(o.ID).SetConfiguratorID(conf.ID).SetPrice(1).
				SetCustomerDetails(json.RawMessage(`{}`)).SetConfiguratorSummary(json.RawMessage("{}")).Save(sys))
			counts := dbtest.Must(c.OrderCount.Query().All(sys))
			if len(counts) != 1 || counts[0].Orders != 1 {
				t.Errorf("order counts after one order: %+v; want one row counting 1", counts)
			}
			dates := dbtest.Must(c.OrderDateCount.Query().All(sys))
			if len(dates) != 2 || dates[0].Orders != 1 || dates[1].Orders != 1 || dates[0].Month == dates[1].Month {
				t.Errorf("order counts by date after one order: %+v; want a day's and a month's row, each counting 1", dates)
			}
		})
	}
}
