package query

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/ent/orderdatecount"
	"github.com/configurator/catalogue/internal/dbtest"
)

// TestTailPagesSkipTheSeek: of an order list long enough for its far pages
// to seek (more than farOffset rows before them), the pages among its last
// farOffset rows are read from the end with the stored total alone, no
// read of the counts of its periods, and the pages further from the end
// seek; every page, and one past the end, holds what it holds read from
// the start, with the same total. rest's TestPagesFromEitherEnd compares
// the ends on every page of shorter lists.
func TestTailPagesSkipTheSeek(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			c, statements := logged(t, b.URL(t))
			A := dbtest.NewTenant(t, c, "A", "Sofa", "Chair")
			const orders, perPage = 2450, 100
			var bulk []*ent.OrderCreate
			start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
			for i := range orders {
				// Several months, with ties (every time is used twice).
				at := start.Add(time.Duration(i/2) * 97 * time.Minute)
				bulk = append(bulk, c.Order.Create().SetOwnerID(A.ID).SetConfiguratorID(A.Confs[i%2].ID).SetPrice(1).
					SetCreatedAt(at).SetCustomerDetails(json.RawMessage(`{}`)).SetConfiguratorSummary(json.RawMessage(`{}`)))
			}
			for chunk := range slices.Chunk(bulk, 500) {
				dbtest.Must(c.Order.CreateBulk(chunk...).Save(dbtest.Sys))
			}
			ctx := A.Dash(0)
			d := c.Debug()
			// page reads page p from end e and returns its ids, its total
			// and whether it read the counts of periods (a seek).
			page := func(p int, e End) (ids []int, total int, seeked bool) {
				restore := ReadPagesFrom(e)
				defer restore()
				statements()
				pp := perPage
				items, info, err := Page[ent.Order, order.OrderOption, *ent.OrderSelect](ctx, d.Order.Query(), Args{Page: &p, PerPage: &pp,
					Sort: Sort{Column: order.FieldCreatedAt, Desc: true}, Counted: true, Total: OrderTotal(ctx, d)},
					func(q *ent.OrderQuery) (*ent.OrderQuery, error) { return q, nil })
				if err != nil {
					t.Fatalf("page %d from end %d: %v", p, e, err)
				}
				for _, o := range items {
					ids = append(ids, o.ID)
				}
				for _, s := range statements() {
					seeked = seeked || strings.Contains(s, orderdatecount.Table)
				}
				return ids, info.Total, seeked
			}
			last := (orders + perPage - 1) / perPage
			tail, sought := 0, 0
			for p := 1; p <= last+1; p++ {
				want, wantTotal, _ := page(p, FromStart)
				got, total, seeked := page(p, Nearer)
				if !slices.Equal(got, want) || total != wantTotal {
					t.Fatalf("page %d: ids %v, total %d; from the start %v, %d", p, got, total, want, wantTotal)
				}
				skip := (p - 1) * perPage
				if skip < farOffset {
					continue
				}
				if inTail := orders-skip-perPage < farOffset; seeked == inTail {
					t.Errorf("page %d (%d rows after it): read the counts of periods %v; want %v", p, orders-skip-perPage, seeked, !inTail)
				} else if inTail {
					tail++
				} else {
					sought++
				}
			}
			if tail < 3 || sought < 3 {
				t.Fatalf("%d pages read from the end, %d sought; want several of each", tail, sought)
			}
		})
	}
}
