package database_test

import (
	"context"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/admit"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
)

// TestBeginGivesThePlaceUp: a request's transaction runs without its place
// in the server's queue (edge.Admit), which another request takes
// meanwhile, and the request queues for one again when it ends.
func TestBeginGivesThePlaceUp(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			c := dbtest.Open(t, b.URL(t))
			for _, end := range []string{"commit", "rollback"} {
				slots := make(chan struct{}, 1)
				p, err := admit.Enter(context.Background(), slots)
				if err != nil {
					t.Fatal(err)
				}
				ctx := admit.With(dbtest.Sys, p)
				tx, err := database.Begin(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				short, cancel := context.WithTimeout(context.Background(), time.Second)
				other, err := admit.Enter(short, slots)
				cancel()
				if err != nil {
					t.Fatalf("no place for another request while a transaction ran: %v", err)
				}
				ended := make(chan error, 1)
				go func() {
					if end == "commit" {
						ended <- tx.Commit()
					} else {
						ended <- tx.Rollback()
					}
				}()
				select {
				case err := <-ended:
					t.Fatalf("%s returned (%v) while the other request held the only place", end, err)
				case <-time.After(50 * time.Millisecond):
				}
				other.Leave()
				if err := <-ended; err != nil {
					t.Fatal(err)
				}
				if len(slots) != 1 {
					t.Fatalf("after %s the request holds %d places; want its one back", end, len(slots))
				}
				p.Leave()
			}
		})
	}
}
