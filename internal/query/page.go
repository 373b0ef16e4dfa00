// Package query builds the hand-written SQL of the service's reads, below
// both transports: page-based lists with their total in one statement,
// the deferred join of pages after the first, the order totals kept in
// order_counts, the configurator's name as a column of an order's row, and
// lookups by id that answer NotFound. The resolvers call it with ent
// queries they have filtered; it knows nothing of GraphQL, HTTP or
// billing, and tenancy stays with ent's privacy rules, which filter every
// query it is handed.
package query

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync/atomic"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// PageQuery is what Page needs of an ent query; every generated query
// type satisfies it (S is its aggregate selection). Exported so that the
// graph's page recipe states the same need instead of repeating it.
type PageQuery[Q any, T any, O ~func(*sql.Selector), S Counter] interface {
	Clone() Q
	Offset(int) Q
	Limit(int) Q
	Order(...O) Q
	All(context.Context) ([]*T, error)
	Aggregate(...ent.AggregateFunc) S
	Modify(...func(*sql.Selector)) S
}

// Counter is an aggregate selection that yields one integer.
type Counter interface {
	Int(context.Context) (int, error)
}

// Sort is a validated sort: a column taken from a generated order-field
// enum (never from client text) and a direction.
type Sort struct {
	Column string
	Desc   bool
}

// Terms orders by the sort column and then by id in the same direction,
// so that pages are stable when many rows share a value and every list
// reads one index (owner, column, id) in order. They are plain ORDER BY
// columns, which the data layer's default orders (ent/schema) see and
// give way to.
func (s Sort) Terms() []func(*sql.Selector) {
	dir := sql.Asc
	if s.Desc {
		dir = sql.Desc
	}
	t := []func(*sql.Selector){func(sel *sql.Selector) { sel.OrderBy(dir(sel.C(s.Column))) }}
	if s.Column != "id" {
		t = append(t, func(sel *sql.Selector) { sel.OrderBy(dir(sel.C("id"))) })
	}
	return t
}

// Total counts the rows of a list, for its page arithmetic. The zero
// Total is COUNT(*) of the filtered query, which the sort indexes answer
// from the index alone.
type Total struct {
	// of is the count as an expression of the page's own statement, given
	// its selector with every filter applied; nil: COUNT(*) of them.
	of func(page *sql.Selector) sql.Querier
	// run counts in a statement of its own; nil: COUNT(*) of the query.
	run func(context.Context) (int, error)
	// stored: run reads a total the database keeps (order_counts), which
	// costs a few rows however long the list; Page then reads it first
	// even when the total is not wanted, to read far pages from the end.
	stored bool
	// seek, when set, finds where a page of the list sorted by seekBy
	// starts without walking the rows before it (seek.go): a bound on
	// the sort column and the rows left to skip after it.
	seek   func(ctx context.Context, skip, n int, desc bool, refine int) (seekAt, error)
	seekBy string
}

// totalColumn names the column that carries a page's total.
const totalColumn = "page_total"

// Args are the arguments of one page: its number and size as the client
// gave them (valid.Page checks them), its order, whether its total is
// wanted, and how to count it.
type Args struct {
	Page, PerPage *int
	Sort          Sort
	// Counted asks for the total (always on REST, whose answers carry it;
	// on GraphQL only when the selection asks for pagination).
	Counted bool
	Total   Total
	// Bounded refuses perPage -1 (valid.BoundedPage), for the lists whose
	// contract has no "every record".
	Bounded bool
}

// valid checks the page number and size (valid.Page, or
// valid.BoundedPage when the list is Bounded).
func (a Args) valid() (page, perPage int, err error) {
	if a.Bounded {
		return valid.BoundedPage(a.Page, a.PerPage)
	}
	return valid.Page(a.Page, a.PerPage)
}

// Info is a page's arithmetic as REST v1 presents it: PerPage is
// valid.AllPages when every record was asked for, and Total and LastPage
// are only known when the page was Counted.
type Info struct {
	Page, PerPage, Total, LastPage int
}

// Page runs a page-based list: one page of q in the given order, shaped
// by load (the edges and columns to load), with its page arithmetic. It
// is the single implementation of the pages REST v1 presents. The total
// is counted in the page's own statement: an uncorrelated subquery the
// database evaluates once, read back from the first row, so a page and
// its total cost one round trip. Only a page with no rows (past the end)
// counts in a statement of its own, to report the last page.
//
// A page in the far half of a long list is read from the other end
// (fromEnd): skipping rows costs in proportion to their number, so the
// last page of two million orders read from the start skips them all.
// That needs the total first, in a statement of its own; Page takes it
// only when it is wanted anyway (Counted) or stored (OrderTotal), and only
// when the page skips at least farOffset rows, below which the extra
// round trip costs more than the rows it saves.
//
// A list whose Total can seek (OrderTotal, sorted by created_at) skips
// such rows by the counts of their periods instead (seek.go): a read of
// the counts of its months (and of the days of one month), which give its
// total too, then a page that skips at most a day's rows from the nearer
// end.
func Page[T any, O ~func(*sql.Selector), S Counter, Q PageQuery[Q, T, O, S]](ctx context.Context, q Q, a Args, load func(Q) (Q, error)) ([]*T, Info, error) {
	p, pp, err := a.valid()
	if err != nil {
		return nil, Info{}, err
	}
	count := a.Total
	if count.run == nil {
		count.run = q.Clone().Aggregate(ent.Count()).Int
	}
	if count.of == nil {
		count.of = countAll
	}
	if q, err = load(q); err != nil {
		return nil, Info{}, err
	}
	info := Info{Page: p, PerPage: pp, LastPage: 1}
	from := seekAt{rest: (p - 1) * pp}
	if pp != valid.AllPages {
		items, at, done, err := nearerEnd(ctx, q, &a, count, &info)
		if done || err != nil {
			return items, info, err
		}
		from = at
	}
	for _, t := range a.Sort.Terms() {
		q = q.Order(O(t))
	}
	if a.Counted {
		q.Modify(func(s *sql.Selector) { s.AppendSelectExprAs(count.of(s), totalColumn) })
	}
	if pp != valid.AllPages {
		q = q.Limit(pp)
		if from.bound != nil {
			// Before the deferred join, whose subquery must see it.
			q.Modify(from.bound)
		}
		if from.rest > 0 {
			q.Modify(deferredJoin(from.rest, a.Sort, pp))
		}
	}
	items, err := all(ctx, q)
	if err != nil {
		return nil, Info{}, fmt.Errorf("page: %w", err)
	}
	if !a.Counted {
		return items, info, nil
	}
	if err := counted(ctx, items, count, &info); err != nil {
		return nil, Info{}, err
	}
	return items, info, nil
}

// counted fills info's total and last page from the total column of a
// page's first row, or by a count of its own when the page has none.
func counted[T any](ctx context.Context, items []*T, count Total, info *Info) error {
	var err error
	switch {
	case len(items) > 0:
		info.Total, err = totalOf(items[0])
	case info.Page > 1:
		info.Total, err = count.run(ctx)
	}
	if err != nil {
		return fmt.Errorf("count: %w", err)
	}
	if info.PerPage != valid.AllPages {
		info.LastPage = max(1, (info.Total+info.PerPage-1)/info.PerPage)
	}
	return nil
}

// nearerEnd reads a page from the end of its list nearer to it, when that
// end is known before reading (done), or tells where the page starts from
// the list's start: after a seek's bound, or after its rows before it.
// When it learns the total, it fills info and clears a.Counted.
func nearerEnd[T any, O ~func(*sql.Selector), S Counter, Q PageQuery[Q, T, O, S]](ctx context.Context, q Q, a *Args, count Total, info *Info) (items []*T, from seekAt, done bool, err error) {
	skip := (info.Page - 1) * info.PerPage
	from = seekAt{rest: skip}
	if refine, ok := seeks(skip); ok && skip > 0 && count.seek != nil && a.Sort.Column == count.seekBy {
		if count.stored && End(pageEnds.Load()) == Nearer {
			// A page among the last farOffset rows is read from the end
			// as cheaply as the first page, knowing only the total: the
			// stored total is a few rows, where the seek reads the counts
			// of every month of the list (1 ms at 2,000,000 orders, more
			// than the page itself). Further from the end, the seek.
			items, done, err := far(ctx, q, *a, count, info, farOffset)
			if done || err != nil {
				return items, from, true, err
			}
		}
		at, err := count.seek(ctx, skip, info.PerPage, a.Sort.Desc, refine)
		if err != nil {
			return nil, from, true, err
		}
		if a.Counted {
			info.Total, info.LastPage = at.total, max(1, (at.total+info.PerPage-1)/info.PerPage)
			a.Counted = false
		}
		switch {
		case at.past:
			return []*T{}, at, true, nil
		case at.reverse:
			items, err := fromEnd(ctx, q, a.Sort, at.rest, at.n, at.bound)
			return items, at, true, err
		}
		return nil, at, false, nil
	}
	if (a.Counted || count.stored) && readsFromEnd(info.Page, info.PerPage) {
		items, done, err := far(ctx, q, *a, count, info, skip)
		if done || err != nil {
			return items, from, true, err
		}
		// Nearer to the start after all: read from it, the total known.
		a.Counted = false
	}
	return nil, from, false, nil
}

// far reads a page that may be near the end of its list: it counts the
// list first (filling info when the total is wanted) and reads the page
// from the end when fewer than within rows follow it, or answers no rows
// past the end. done is false when the page is further from the end.
func far[T any, O ~func(*sql.Selector), S Counter, Q PageQuery[Q, T, O, S]](ctx context.Context, q Q, a Args, count Total, info *Info, within int) (items []*T, done bool, err error) {
	total, err := count.run(ctx)
	if err != nil {
		return nil, true, fmt.Errorf("count: %w", err)
	}
	pp := info.PerPage
	if a.Counted {
		info.Total, info.LastPage = total, max(1, (total+pp-1)/pp)
	}
	if skip := (info.Page - 1) * pp; skip >= total {
		return []*T{}, true, nil
	} else if end := total - skip - pp; end < within || pageEnds.Load() == int32(FromEnd) {
		items, err := fromEnd(ctx, q, a.Sort, end, pp, nil)
		return items, true, err
	}
	return nil, false, nil
}

// fromEnd reads a page from the other end of its list: in the reverse
// order (the tie-breaker id reversed too, so ties keep their places),
// skipping the end rows that follow the page (negative when the page is
// the partial last one, which is then shorter), and returns its rows in
// the list's order. The rows, and so the answer, are those the page read
// from the start holds. bound, when not nil, leaves out rows of that end
// first (a seek's, in the reverse order), so that end counts the rows
// that follow the page within it.
func fromEnd[T any, O ~func(*sql.Selector), S Counter, Q PageQuery[Q, T, O, S]](ctx context.Context, q Q, s Sort, end, n int, bound func(*sql.Selector)) ([]*T, error) {
	if end < 0 {
		n, end = n+end, 0
	}
	s.Desc = !s.Desc
	for _, t := range s.Terms() {
		q = q.Order(O(t))
	}
	q = q.Limit(n)
	if bound != nil {
		q.Modify(bound)
	}
	if end > 0 {
		q.Modify(deferredJoin(end, s, n))
	}
	items, err := all(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	slices.Reverse(items)
	return items, nil
}

// farOffset is the fewest rows a page skips for Page to consider reading
// it from the end. Skipping a row of a sort index costs about 0.15 µs on
// PostgreSQL (page 500 of an owner's orders, 9,980 rows skipped, took
// 2.2 ms against 0.75 ms for page 1), and counting first is a round trip
// of its own (about 0.1 to 0.2 ms), so below about a thousand rows the
// start is as near as the end; the pages clients walk most (the first
// fifty) keep their single statement.
const farOffset = 1000

// End is where a page is read from.
type End int32

// The ends a page can be read from: Nearer, the service's choice, takes
// the end nearer to the page whenever the total is at hand, or seeks a
// far page of a list that can (seek.go); FromStart and FromEnd force one
// end without seeking, and SeekByMonth and SeekByDay force seeking every
// page after the first that can, by months (never split into days) or by
// days (every month split), for tests that compare them all.
const (
	Nearer End = iota
	FromStart
	FromEnd
	SeekByMonth
	SeekByDay
)

// pageEnds is the end pages are read from (an End).
var pageEnds atomic.Int32

// ReadPagesFrom makes every page be read from end e until the returned
// function restores the previous choice. It exists for tests, which
// compare the answers of both ends; the service never calls it.
func ReadPagesFrom(e End) (restore func()) {
	old := pageEnds.Swap(int32(e))
	return func() { pageEnds.Store(old) }
}

// seeks reports whether a page that skips skip rows seeks them (when its
// list can), and above how many rows of a month it splits it into days.
func seeks(skip int) (refine int, ok bool) {
	switch End(pageEnds.Load()) {
	case FromStart, FromEnd:
		return 0, false
	case SeekByMonth:
		return math.MaxInt, true
	case SeekByDay:
		return 0, true
	}
	return farOffset, skip >= farOffset
}

// readsFromEnd reports whether page p of pp rows may be read from the end,
// before the total says which end is nearer.
func readsFromEnd(p, pp int) bool {
	switch End(pageEnds.Load()) {
	case FromStart:
		return false
	case FromEnd:
		return true
	}
	return (p-1)*pp >= farOffset
}

// all runs q, reading its rows as its load set (ScanWith) when its type
// can (AllScanned).
func all[T any, Q interface {
	All(context.Context) ([]*T, error)
}](ctx context.Context, q Q) ([]*T, error) {
	if s, ok := any(q).(interface {
		AllScanned(context.Context) ([]*T, error)
	}); ok {
		return s.AllScanned(ctx)
	}
	return q.All(ctx)
}

// countAll is COUNT(*) of the rows page's filters select.
func countAll(page *sql.Selector) sql.Querier {
	return sql.Dialect(page.Dialect()).Select(sql.Count("*")).From(sql.Table(page.TableName())).Where(page.Clone().P())
}

// totalOf reads the total column of a page's row.
func totalOf(row any) (int, error) {
	v, err := row.(interface {
		Value(string) (ent.Value, error)
	}).Value(totalColumn)
	if err != nil {
		return 0, err
	}
	return intOf(v)
}

// intOf reads an integer column as the drivers return it.
func intOf(v ent.Value) (int, error) {
	switch v := v.(type) {
	case int64:
		return int(v), nil
	case []byte:
		return strconv.Atoi(string(v))
	case string:
		return strconv.Atoi(v)
	case float64:
		return int(v), nil
	}
	return 0, fmt.Errorf("integer column of type %T", v)
}

// deferredJoin rewrites a page that skips rows, SELECT columns FROM t
// WHERE filters ORDER BY sort LIMIT n, into
//
//	SELECT columns FROM t WHERE filters AND id IN (
//	  SELECT id FROM t WHERE filters ORDER BY sort LIMIT n OFFSET $skip)
//	ORDER BY sort LIMIT n
//
// The rows a page skips are then read from the sort index alone (an
// index-only scan: the indexes end with id), and only the n rows shown
// are read from the table; skipping k rows of the table itself cost a
// heap fetch each, about 4 ms for page 50 of an owner's orders. It runs
// last (an ent modifier), when the selector holds every filter,
// tenancy's included, and its limit; the outer query keeps the filters
// too. The offset is a parameter (ent writes literals): every page of a
// list is then one prepared statement, planned once per connection.
//
// The subquery is built of the page's table, filters, sort and limit
// alone, not cloned from its selector: a join the page has (the order's
// configurator name, WithConfiguratorName) would come with a clone, and
// PostgreSQL, which drops such a join when nothing reads it, still reads
// the table for the join's columns instead of the index alone.
func deferredJoin(skip int, sort Sort, limit int) func(*sql.Selector) {
	return func(s *sql.Selector) {
		ids := sql.Dialect(s.Dialect()).Select(s.C("id")).From(sql.Table(s.TableName()))
		if p := s.Clone().P(); p != nil {
			ids.Where(p)
		}
		for _, t := range sort.Terms() {
			t(ids)
		}
		ids.Limit(limit)
		s.Where(sql.In(s.C("id"), offset{ids, skip}))
	}
}

// offset is a selector followed by OFFSET skip as a parameter.
type offset struct {
	*sql.Selector
	skip int
}

func (o offset) Query() (string, []any) {
	q, args := o.Selector.Query()
	p := "?"
	if o.Dialect() == dialect.Postgres {
		p = "$" + strconv.Itoa(o.Total()+1)
	}
	return q + " OFFSET " + p, append(args, o.skip)
}

// One returns the single result of q, or NotFound naming what was sought.
func One[T any](ctx context.Context, q interface {
	Only(context.Context) (*T, error)
}, what string, id int) (*T, error) {
	v, err := q.Only(ctx)
	if err != nil {
		if ent.IsNotFound(err) {
			return nil, apperr.E(apperr.NotFound, "%s %d not found", what, id)
		}
		return nil, fmt.Errorf("load %s %d: %w", what, id, err)
	}
	return v, nil
}

// Visible answers NotFound, naming field when the input named the
// record, unless q (a query by id) finds a record the viewer can see. A
// write that points at another owner's record is refused before any file
// is stored; the privacy rules refuse it again on the write itself.
func Visible(ctx context.Context, q interface {
	Exist(context.Context) (bool, error)
}, field, what string, id int) error {
	ok, err := q.Exist(ctx)
	if err != nil {
		return fmt.Errorf("find %s %d: %w", what, id, err)
	}
	if !ok {
		return apperr.E(apperr.NotFound, "%s %d not found", what, id).At(field)
	}
	return nil
}

// NotFoundAs turns ent's not-found of a write by id into NotFound naming
// the record.
func NotFoundAs(err error, what string, id int) error {
	if ent.IsNotFound(err) {
		return apperr.E(apperr.NotFound, "%s %d not found", what, id)
	}
	if err != nil {
		return fmt.Errorf("write %s %d: %w", what, id, err)
	}
	return nil
}
