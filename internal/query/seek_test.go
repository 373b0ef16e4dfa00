package query

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/ent/orderdatecount"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/valid"
)

// TestSeekUnderConcurrentDeletes: a seek reads the counts of a list's
// months, then, in a statement of its own, the counts of the days of the
// month its page starts in. An operator's bulk delete of that month's
// orders between the two (made here by the statement log, just before the
// days' statement runs, so the interleaving is the same on every run)
// leaves the days counting fewer orders than the month did. The page
// still answers: a run of consecutive rows of the list as it now stands,
// never an error, on both ends a page can be read from and in both
// directions.
func TestSeekUnderConcurrentDeletes(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			sys := dbtest.Open(t, url)
			// between, when set, runs once just before the next read of
			// the counts of a month's days.
			var mu sync.Mutex
			var between func()
			periods := 0
			c := dbtest.Open(t, url, ent.Log(func(a ...any) {
				s := fmt.Sprint(a...)
				if !strings.Contains(s, orderdatecount.Table) || !strings.Contains(s, "GROUP BY") {
					return
				}
				mu.Lock()
				periods++
				run := between
				if periods%2 == 0 {
					between = nil
				} else {
					run = nil
				}
				mu.Unlock()
				if run != nil {
					run()
				}
			})).Debug()
			const orders, perPage = 480, 20
			start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
			// Four months, 120 orders each, spread over their days.
			at := func(i int) time.Time {
				return start.AddDate(0, i/120, 0).Add(time.Duration(i%120) * 5 * time.Hour)
			}
			for _, tc := range []struct {
				name string
				page int
				desc bool
			}{
				{"forward, newest first", 5, true},
				{"forward, oldest first", 5, false},
				{"from the end, newest first", 19, true},
				{"from the end, oldest first", 19, false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					A := dbtest.NewTenant(t, sys, "A "+tc.name, "Sofa")
					var bulk []*ent.OrderCreate
					for i := range orders {
						bulk = append(bulk, sys.Order.Create().SetOwnerID(A.ID).SetConfiguratorID(A.Confs[0].ID).SetPrice(1).
							SetCreatedAt(at(i)).SetCustomerDetails(json.RawMessage(`{}`)).SetConfiguratorSummary(json.RawMessage(`{}`)))
					}
					for chunk := range slices.Chunk(bulk, 240) {
						dbtest.Must(sys.Order.CreateBulk(chunk...).Save(dbtest.Sys))
					}
					ctx := A.Dash(0)
					from, until := start, start.AddDate(0, 4, 0)
					where := &ent.OrderWhereInput{CreatedAtGTE: &from, CreatedAtLT: &until}
					read := func(client *ent.Client, p int, e End) ([]int, error) {
						restore := ReadPagesFrom(e)
						defer restore()
						pp := perPage
						q := client.Order.Query().Where(order.CreatedAtGTE(from), order.CreatedAtLT(until))
						items, _, err := Page[ent.Order, order.OrderOption, *ent.OrderSelect](ctx, q, Args{Page: &p, PerPage: &pp,
							Sort: Sort{Column: order.FieldCreatedAt, Desc: tc.desc}, Counted: true, Total: OrderTotal(ctx, client, where)},
							func(q *ent.OrderQuery) (*ent.OrderQuery, error) { return q, nil })
						ids := make([]int, 0, len(items))
						for _, o := range items {
							ids = append(ids, o.ID)
						}
						return ids, err
					}
					before, err := read(sys, tc.page, FromStart)
					if err != nil || len(before) != perPage {
						t.Fatalf("page %d from the start: %v, %v", tc.page, before, err)
					}
					// The month the page starts in loses all its orders
					// but its newest between the two reads of counts.
					first := dbtest.Must(sys.Order.Get(dbtest.Sys, before[0]))
					month := time.Date(first.CreatedAt.Year(), first.CreatedAt.Month(), 1, 0, 0, 0, 0, time.UTC)
					mu.Lock()
					periods, between = 0, func() {
						newest := dbtest.Must(sys.Order.Query().Where(order.OwnerID(A.ID), order.CreatedAtGTE(month),
							order.CreatedAtLT(month.AddDate(0, 1, 0))).Order(ent.Desc(order.FieldCreatedAt)).FirstID(dbtest.Sys))
						dbtest.Must(sys.Order.Delete().Where(order.OwnerID(A.ID), order.CreatedAtGTE(month),
							order.CreatedAtLT(month.AddDate(0, 1, 0)), order.IDNEQ(newest)).Exec(dbtest.Sys))
					}
					mu.Unlock()
					got, err := read(c, tc.page, SeekByDay)
					mu.Lock()
					ran := between == nil && periods >= 2
					mu.Unlock()
					if !ran {
						t.Fatalf("the delete did not run between the reads of counts (%d reads; %v, %v)", periods, got, err)
					}
					if err != nil {
						t.Fatalf("page %d under a concurrent delete: %v", tc.page, err)
					}
					pp := valid.AllPages
					all := dbtest.Must(func() ([]int, error) {
						restore := ReadPagesFrom(FromStart)
						defer restore()
						p := 1
						q := sys.Order.Query().Where(order.CreatedAtGTE(from), order.CreatedAtLT(until))
						items, _, err := Page[ent.Order, order.OrderOption, *ent.OrderSelect](ctx, q, Args{Page: &p, PerPage: &pp,
							Sort: Sort{Column: order.FieldCreatedAt, Desc: tc.desc}},
							func(q *ent.OrderQuery) (*ent.OrderQuery, error) { return q, nil })
						ids := make([]int, 0, len(items))
						for _, o := range items {
							ids = append(ids, o.ID)
						}
						return ids, err
					}())
					if len(got) == 0 || len(got) > perPage {
						t.Fatalf("page %d under a concurrent delete holds %d rows; want 1 to %d", tc.page, len(got), perPage)
					}
					i := slices.Index(all, got[0])
					if i < 0 || i+len(got) > len(all) || !slices.Equal(all[i:i+len(got)], got) {
						t.Fatalf("page %d under a concurrent delete: %v is not a run of the list %v", tc.page, got, all)
					}
				})
			}
		})
	}
}
