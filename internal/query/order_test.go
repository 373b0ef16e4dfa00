package query

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/internal/dbtest"
)

// day is the UTC midnight of y-m-d.
func day(y int, m time.Month, d int) *time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return &t
}

// TestDateSpans checks how a range of whole days splits into the days
// before its first whole month, its whole months and the days after.
func TestDateSpans(t *testing.T) {
	d := func(month bool, from, until string) dateSpan { return dateSpan{month: month, from: from, until: until} }
	for _, c := range []struct {
		name        string
		from, until *time.Time
		want        []dateSpan
	}{
		{"W3: three months and a day", day(2024, 3, 1), day(2024, 6, 2),
			[]dateSpan{d(true, "2024-03-01", "2024-06-01"), d(false, "2024-06-01", "2024-06-02")}},
		{"days at both ends", day(2024, 2, 27), day(2024, 5, 3),
			[]dateSpan{d(false, "2024-02-27", "2024-03-01"), d(true, "2024-03-01", "2024-05-01"), d(false, "2024-05-01", "2024-05-03")}},
		{"within a month", day(2024, 2, 3), day(2024, 2, 10), []dateSpan{d(false, "2024-02-03", "2024-02-10")}},
		{"across one month's end, no whole month", day(2024, 1, 20), day(2024, 2, 10), []dateSpan{d(false, "2024-01-20", "2024-02-10")}},
		{"one whole month", day(2024, 2, 1), day(2024, 3, 1), []dateSpan{d(true, "2024-02-01", "2024-03-01")}},
		{"across a year", day(2023, 12, 31), day(2024, 2, 1),
			[]dateSpan{d(false, "2023-12-31", "2024-01-01"), d(true, "2024-01-01", "2024-02-01")}},
		{"one day", day(2024, 2, 29), day(2024, 3, 1), []dateSpan{d(false, "2024-02-29", "2024-03-01")}},
		{"from only", day(2024, 2, 29), nil, []dateSpan{d(false, "2024-02-29", "2024-03-01"), d(true, "2024-03-01", "")}},
		{"from a month's first day only", day(2024, 3, 1), nil, []dateSpan{d(true, "2024-03-01", "")}},
		{"until only", nil, day(2024, 3, 5), []dateSpan{d(true, "", "2024-03-01"), d(false, "2024-03-01", "2024-03-05")}},
		{"until a month's first day only", nil, day(2024, 3, 1), []dateSpan{d(true, "", "2024-03-01")}},
		{"empty", day(2024, 3, 5), day(2024, 3, 5), nil},
		{"reversed", day(2024, 3, 5), day(2024, 3, 1), nil},
	} {
		if got := dateSpans(c.from, c.until); !slices.Equal(got, c.want) {
			t.Errorf("%s: %+v; want %+v", c.name, got, c.want)
		}
	}
}

// TestOrderTotalByDates creates orders over half a year, some at the very
// ends of UTC days and some written in other zones, and checks, for many
// ranges of whole days with and without a configurator, that OrderTotal
// answers from the stored counts and that its total, both as the page's
// subquery and on its own (a page read from the end counts first), is
// the number of orders the same filters list. Bounds that are not UTC
// midnights, and other filters, are counted (the zero Total).
func TestOrderTotalByDates(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			url := b.URL(t)
			c := dbtest.Open(t, url)
			A, B := dbtest.NewTenant(t, c, "A", "Sofa", "Chair"), dbtest.NewTenant(t, c, "B", "Lamp")
			ctx := A.Dash(0)
			plus2 := time.FixedZone("+02", 2*3600)
			minus5 := time.FixedZone("-05", -5*3600)
			times := []time.Time{
				time.Date(2024, 1, 31, 23, 59, 59, 999_000_000, time.UTC),
				time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC),
				time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC),
				time.Date(2024, 3, 1, 1, 30, 0, 0, plus2),   // February 29 in UTC on PostgreSQL
				time.Date(2024, 5, 31, 21, 0, 0, 0, minus5), // June 1 in UTC on PostgreSQL
				time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC),
				time.Date(2024, 6, 30, 23, 59, 59, 0, time.UTC),
			}
			for i := range 60 {
				times = append(times, time.Date(2024, 1, 10, 7, 0, 0, 0, time.UTC).Add(time.Duration(i)*(71*time.Hour+13*time.Minute)))
			}
			var bulk []*ent.OrderCreate
			for i, at := range times {
				owner, conf := A.ID, A.Confs[i%2].ID
				if i%5 == 4 {
					owner, conf = B.ID, B.Confs[0].ID
				}
				bulk = append(bulk, c.Order.Create().SetOwnerID(owner).SetConfiguratorID(conf).SetPrice(1).SetCreatedAt(at).
					SetCustomerDetails(json.RawMessage(`{}`)).SetConfiguratorSummary(json.RawMessage(`{}`)))
			}
			dbtest.Must(c.Order.CreateBulk(bulk...).Save(dbtest.Sys))

			bounds := []*time.Time{nil, day(2023, 12, 1), day(2024, 1, 31), day(2024, 2, 1), day(2024, 2, 29), day(2024, 3, 1),
				day(2024, 3, 17), day(2024, 5, 1), day(2024, 6, 1), day(2024, 6, 2), day(2024, 7, 1), day(2025, 1, 1)}
			confs := []*int{nil, &A.Confs[0].ID, &A.Confs[1].ID, &B.Confs[0].ID}
			nonzero := 0
			for _, from := range bounds {
				for _, until := range bounds {
					if from == nil && until == nil {
						continue
					}
					for _, conf := range confs {
						where := &ent.OrderWhereInput{ConfiguratorID: conf}
						dates := &ent.OrderWhereInput{CreatedAtGTE: from, CreatedAtLT: until}
						name := fmt.Sprintf("from %v until %v, configurator %v", from, until, conf)
						if n := checkTotal(t, ctx, c, name, true, where, dates); n > 0 {
							nonzero++
						}
					}
				}
			}
			if nonzero < 200 {
				t.Errorf("only %d ranges with orders; the test checks too little", nonzero)
			}
			noon := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
			midnightElsewhere := time.Date(2024, 3, 1, 0, 0, 0, 0, plus2)
			checkTotal(t, ctx, c, "a bound at noon", false, &ent.OrderWhereInput{CreatedAtGTE: &noon})
			checkTotal(t, ctx, c, "a bound at another zone's midnight", false, &ent.OrderWhereInput{CreatedAtLT: &midnightElsewhere})
			checkTotal(t, ctx, c, "a status besides the dates", false, &ent.OrderWhereInput{CreatedAtGTE: day(2024, 3, 1), Status: new(string)})
			checkTotal(t, ctx, c, "two ranges", true, &ent.OrderWhereInput{CreatedAtGTE: day(2024, 2, 1), CreatedAtLT: day(2024, 6, 1)},
				&ent.OrderWhereInput{CreatedAtGTE: day(2024, 3, 1), CreatedAtLT: day(2024, 7, 1)})
		})
	}
}

// checkTotal checks that OrderTotal of wheres is stored (or not) as want
// says and that its totals, in a page's statement and on their own, are
// the number of orders the filters list; it returns that number.
func checkTotal(t *testing.T, ctx context.Context, c *ent.Client, name string, stored bool, wheres ...*ent.OrderWhereInput) int {
	t.Helper()
	q := c.Order.Query()
	for _, w := range wheres {
		p, err := w.P()
		if errors.Is(err, ent.ErrEmptyOrderWhereInput) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		q = q.Where(p)
	}
	want, err := q.Clone().Count(ctx)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	total := OrderTotal(ctx, c, wheres...)
	if total.stored != stored || (total.of != nil) != stored {
		t.Errorf("%s: stored %v (subquery %v); want %v", name, total.stored, total.of != nil, stored)
	}
	one := 1
	for _, end := range []End{FromStart, FromEnd} {
		restore := ReadPagesFrom(end)
		_, info, err := Page[ent.Order, order.OrderOption, *ent.OrderSelect](ctx, q.Clone(), Args{Page: &one, PerPage: &one,
			Sort: Sort{Column: order.FieldCreatedAt, Desc: true}, Counted: true, Total: total},
			func(q *ent.OrderQuery) (*ent.OrderQuery, error) { return q, nil })
		restore()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if info.Total != want {
			t.Errorf("%s, page read from end %d: total %d; the filters list %d orders", name, end, info.Total, want)
		}
	}
	return want
}

// TestTypedScan reads orders, with their configurator's name and a
// page's total, once through ent's generic scan (All) and once through
// the typed one of WithConfiguratorName (AllScanned), and checks that
// every field, the name and the total are the same, NULLs and empty
// print maps included.
func TestTypedScan(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			c := dbtest.Open(t, b.URL(t))
			A, B := dbtest.NewTenant(t, c, "A", "Sofa", "Chair"), dbtest.NewTenant(t, c, "B", "Lamp")
			snapshot, url := "snap", "https://example.com/i.pdf"
			maps := [][]string{nil, {}, {"https://cdn.example.com/a.png", `"quoted", \ back`}}
			var bulk []*ent.OrderCreate
			for i := range 7 {
				tn := A
				if i == 3 {
					tn = B
				}
				o := c.Order.Create().SetOwnerID(tn.ID).SetConfiguratorID(tn.Confs[i%len(tn.Confs)].ID).SetPrice(float64(i) + 0.25).
					SetStatus(fmt.Sprint("s", i)).SetCreatedAt(time.Date(2024, 1, i+1, 10, 0, 0, 123_456_000, time.UTC)).
					SetCustomerDetails(json.RawMessage(fmt.Sprintf(`{"name": "n%d", "nested": {"a": [1, 2]}}`, i))).
					SetConfiguratorSummary(json.RawMessage(`{}`)).SetConfiguratorPrintMap(maps[i%len(maps)])
				if i%2 == 0 {
					o.SetConfiguratorSnapshot(snapshot).SetInvoiceURL(url).SetOrderStorefront("shop")
				}
				bulk = append(bulk, o)
			}
			dbtest.Must(c.Order.CreateBulk(bulk...).Save(dbtest.Sys))
			for _, ctx := range []context.Context{A.Dash(0), dbtest.Sys} {
				q := func() *ent.OrderQuery {
					q := WithConfiguratorName(c.Order.Query().Order(ent.Asc(order.FieldID)))
					q.Modify(func(s *sql.Selector) { s.AppendSelectExprAs(countAll(s), totalColumn) })
					return q
				}
				generic, err := q().All(ctx)
				if err != nil {
					t.Fatal(err)
				}
				typed, err := q().AllScanned(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(typed) != len(generic) || len(typed) == 0 {
					t.Fatalf("%d orders typed, %d generic", len(typed), len(generic))
				}
				for i, g := range generic {
					o := typed[i]
					gj, oj := dbtest.Must(json.Marshal(g)), dbtest.Must(json.Marshal(o))
					if string(gj) != string(oj) {
						t.Errorf("order %d typed:\n%s\ngeneric:\n%s", g.ID, oj, gj)
					}
					if !reflect.DeepEqual(o.ConfiguratorPrintMap, g.ConfiguratorPrintMap) || !o.CreatedAt.Equal(g.CreatedAt) ||
						o.CreatedAt.Location().String() != g.CreatedAt.Location().String() {
						t.Errorf("order %d: print map %#v, created %v; generic %#v, %v", g.ID, o.ConfiguratorPrintMap, o.CreatedAt,
							g.ConfiguratorPrintMap, g.CreatedAt)
					}
					if ConfiguratorName(o) != ConfiguratorName(g) || ConfiguratorName(o) == "" {
						t.Errorf("order %d: configurator %q; generic %q", g.ID, ConfiguratorName(o), ConfiguratorName(g))
					}
					tt, err1 := totalOf(o)
					gt, err2 := totalOf(g)
					if tt != gt || tt != len(generic) || err1 != nil || err2 != nil {
						t.Errorf("order %d: total %d (%v); generic %d (%v), want %d", g.ID, tt, err1, gt, err2, len(generic))
					}
				}
			}
		})
	}
}

// TestColumnScanners holds number to database/sql's own
// conversion (NullInt64, NullFloat64) for every kind of value a driver
// may hand over: the same number, or an error where it errs, NULL
// included.
func TestColumnScanners(t *testing.T) {
	for _, src := range []any{int64(42), int64(-7), float64(2.5), []byte("17"), "18", []byte("x"), "1.5", true, nil, time.Unix(0, 0)} {
		var c number[int64]
		var n stdsql.NullInt64
		err, want := c.Scan(src), n.Scan(src)
		if want == nil && !n.Valid {
			want = errors.New("NULL")
		}
		if (err == nil) != (want == nil) || err == nil && c.v != n.Int64 {
			t.Errorf("number[int64].Scan(%#v) = %d, %v; database/sql %d, %v", src, c.v, err, n.Int64, want)
		}
		var f number[float64]
		var nf stdsql.NullFloat64
		err, want = f.Scan(src), nf.Scan(src)
		if want == nil && !nf.Valid {
			want = errors.New("NULL")
		}
		if (err == nil) != (want == nil) || err == nil && f.v != nf.Float64 {
			t.Errorf("number[float64].Scan(%#v) = %v, %v; database/sql %v, %v", src, f.v, err, nf.Float64, want)
		}
	}
}
