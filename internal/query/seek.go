package query

import (
	"context"
	"fmt"
	"slices"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/ent/orderdatecount"
)

// A page deep into an order list sorted by created_at skips most of its
// rows by their dates instead of one by one: order_date_counts holds, for
// every UTC month and day, how many of the list's orders were created in
// it (exact: the database keeps it, ent/schema/orderdatecount.go), so
// summing the periods from the page's end of the list tells which period
// the page starts in and how many rows lie beyond it. The page's
// statement then bounds created_at at that period (every row beyond it
// falls away by the sort index's range, not by OFFSET) and skips only the
// rows of the period before the page. Rows of one period are contiguous in
// the sort (the id tie-breaker orders rows within equal times, which one
// period holds), so the page holds exactly the rows OFFSET would give it.
// At 2,000,000 orders the middle page skipped a million index entries
// (about 87-300 ms); it now skips at most a day's orders.

// seekAt is where a page is read after seeking: from the end of the list
// when reverse (in the reverse order, its rows then reversed, as fromEnd
// reads), n rows after a bound on created_at that leaves out the periods
// ahead of them (nil: none) and rest rows more; total is the list's
// length, the sum of its periods, and past tells that the page lies past
// the end.
type seekAt struct {
	bound   func(*sql.Selector)
	rest, n int
	reverse bool
	total   int
	past    bool
}

// period is the count of one month or day of order_date_counts, as its
// first day (YYYY-MM-DD) and kind.
type period struct {
	Day    string `sql:"day"`
	Month  bool   `sql:"month"`
	Orders int    `sql:"orders"`
}

// start and end are the period's first instant and the first after it.
func (p period) start() (time.Time, error) {
	if len(p.Day) < len(time.DateOnly) {
		return time.Time{}, fmt.Errorf("period day %q", p.Day)
	}
	// PostgreSQL's date arrives as a time, which database/sql writes
	// as RFC 3339 into a string; SQLite's is the text itself.
	return time.Parse(time.DateOnly, p.Day[:len(time.DateOnly)])
}

func (p period) end(start time.Time) time.Time {
	if p.Month {
		return start.AddDate(0, 1, 0)
	}
	return start.AddDate(0, 0, 1)
}

// seek finds where the page of n rows after skip rows of the orders f
// selects, sorted by created_at (newest first when desc), is read: the
// periods f's range covers (whole months and the days at its ends, as the
// totals sum them) give the list's length, and are summed from the end of
// the list nearer to the page until the one it starts in; a month is
// split into its days when more than refine of its rows would be skipped.
func (f orderFilter) seek(ctx context.Context, client *ent.Client, skip, n int, desc bool, refine int) (seekAt, error) {
	periods, err := f.periods(ctx, client, f.dates)
	if err != nil {
		return seekAt{}, err
	}
	at := seekAt{rest: skip, n: n}
	for _, p := range periods {
		at.total += p.Orders
	}
	if skip >= at.total {
		at.past = true
		return at, nil
	}
	if after := at.total - skip - n; after < skip {
		// Nearer to the end: skip the rows after the page instead, in
		// the reverse order (the last page may be partial).
		at.reverse, desc = true, !desc
		at.rest, at.n = max(after, 0), n+min(after, 0)
	}
	p, before, found := walk(periods, at.rest, desc)
	if !found {
		return seekAt{}, fmt.Errorf("seek: %d rows do not reach row %d", at.total, at.rest)
	}
	start, err := p.start()
	if err != nil {
		return seekAt{}, err
	}
	if p.Month && at.rest-before > refine {
		days, err := f.periods(ctx, client, f.daysOf(start, p.end(start)))
		if err != nil {
			return seekAt{}, err
		}
		// The days are read in a statement of their own, so orders
		// deleted since the months were read (operators delete in bulk)
		// can leave them short of the page's row. The page then starts
		// at the month, as the months alone place it: its rows are those
		// of the list as it now stands, a page earlier or later than
		// the months promised at worst, never an error.
		if d, inMonth, found := walk(days, at.rest-before, desc); found {
			p, before = d, before+inMonth
			if start, err = p.start(); err != nil {
				return seekAt{}, err
			}
		}
	}
	at.rest -= before
	switch {
	case before == 0:
	case desc:
		end := p.end(start)
		at.bound = func(s *sql.Selector) { s.Where(sql.LT(s.C(order.FieldCreatedAt), end)) }
	default:
		at.bound = func(s *sql.Selector) { s.Where(sql.GTE(s.C(order.FieldCreatedAt), start)) }
	}
	return at, nil
}

// daysOf selects the counts of f's days from start until end.
func (f orderFilter) daysOf(start, end time.Time) func(*sql.Selector) *sql.Predicate {
	days := []dateSpan{{from: start.Format(time.DateOnly), until: end.Format(time.DateOnly)}}
	return func(s *sql.Selector) *sql.Predicate { return f.within(s, days) }
}

// periods reads the counts of the periods which selects, summed over
// configurators and slots, under the tenancy rules, in no order.
func (f orderFilter) periods(ctx context.Context, client *ent.Client, which func(*sql.Selector) *sql.Predicate) ([]period, error) {
	var ps []period
	err := client.OrderDateCount.Query().Where(func(s *sql.Selector) { s.Where(which(s)) }).
		Modify(func(s *sql.Selector) {
			s.Select(s.C(orderdatecount.FieldDay), s.C(orderdatecount.FieldMonth)).
				AppendSelectExprAs(sql.Raw("SUM("+s.C(orderdatecount.FieldOrders)+")"), orderdatecount.FieldOrders).
				GroupBy(s.C(orderdatecount.FieldDay), s.C(orderdatecount.FieldMonth))
		}).Scan(ctx, &ps)
	if err != nil {
		return nil, fmt.Errorf("seek: %w", err)
	}
	return ps, nil
}

// walk sums periods (disjoint) from the start of the list (the oldest
// first, the newest when desc) until the one that holds row skip; before
// is the count of the rows ahead of that period.
func walk(periods []period, skip int, desc bool) (p period, before int, found bool) {
	slices.SortFunc(periods, func(a, b period) int {
		if desc {
			a, b = b, a
		}
		if a.Day < b.Day {
			return -1
		}
		if a.Day > b.Day {
			return 1
		}
		return 0
	})
	for _, p := range periods {
		if before+p.Orders > skip {
			return p, before, true
		}
		before += p.Orders
	}
	return period{}, before, false
}
