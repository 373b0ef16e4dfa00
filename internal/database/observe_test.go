package database_test

import (
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
)

// TestPool: the pool under a client is found for its statistics, and it
// is the one the client uses.
func TestPool(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		db := database.Pool(c)
		if db == nil {
			t.Fatal("Pool of a client Open made = nil")
		}
		if max := db.Stats().MaxOpenConnections; max != 8 && max != 20 {
			t.Errorf("MaxOpenConnections = %d; want the pool Open configured (8 on SQLite, 20 on PostgreSQL)", max)
		}
		if db.Stats().OpenConnections == 0 {
			t.Error("the pool has no open connection after the client migrated through it")
		}
	})
	if database.Pool(&ent.Client{}) != nil {
		t.Error("Pool of a client Open did not make is not nil")
	}
}
