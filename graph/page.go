package graph

import (
	"context"
	"fmt"
	"strings"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/apperr"
)

// Page sizes of the page-based lists. The spec leaves them open; 15 is the
// default of the Laravel paginator whose envelope REST v1 reproduces.
const (
	DefaultPerPage = 15
	MaxPerPage     = 100
	// AllPages is the perPage value that asks for every record.
	AllPages = -1
)

// listQuery is what the page helper needs of an ent query; every generated
// query type satisfies it.
type listQuery[Q any, T any, O ~func(*sql.Selector)] interface {
	Clone() Q
	Count(context.Context) (int, error)
	Offset(int) Q
	Limit(int) Q
	Order(...O) Q
	All(context.Context) ([]*T, error)
}

// sortSpec is a validated sort: a column taken from a generated order-field
// enum (never from client text) and a direction.
type sortSpec struct {
	column string
	desc   bool
}

// orderField is a generated ent order-field enum, such as ent.OrderOrderField.
type orderField interface{ String() string }

// sortOf turns the optional orderBy and order arguments into a sortSpec.
// The enum names of this schema are the upper-cased column names (ID,
// CREATED_AT, ...), which a test checks for every type.
func sortOf[F orderField](field *F, dir *entgql.OrderDirection, def sortSpec) (sortSpec, error) {
	s := def
	if field != nil {
		s.column = strings.ToLower((*field).String())
	}
	if dir != nil {
		if err := dir.Validate(); err != nil {
			return s, apperr.Field("order", "order must be ASC or DESC")
		}
		s.desc = *dir == entgql.OrderDirectionDesc
	}
	return s, nil
}

// terms orders by the sort column and then by id, so that pages are stable
// when many rows share a value.
func (s sortSpec) terms() []func(*sql.Selector) {
	opt := sql.OrderAsc()
	if s.desc {
		opt = sql.OrderDesc()
	}
	t := []func(*sql.Selector){sql.OrderByField(s.column, opt).ToFunc()}
	if s.column != "id" {
		t = append(t, sql.OrderByField("id", opt).ToFunc())
	}
	return t
}

// pageArgs validates page and perPage and fills in their defaults.
func pageArgs(page, perPage *int) (int, int, error) {
	p, pp := 1, DefaultPerPage
	if page != nil {
		p = *page
	}
	if perPage != nil {
		pp = *perPage
	}
	if p < 1 {
		return 0, 0, apperr.Field("page", "page must be 1 or more, got %d", p)
	}
	if pp != AllPages && (pp < 1 || pp > MaxPerPage) {
		return 0, 0, apperr.Field("perPage", "perPage must be between 1 and %d, or %d for all records, got %d", MaxPerPage, AllPages, pp)
	}
	return p, pp, nil
}

// paginate runs a page-based list: it counts the filtered query, then loads
// one page of it in the given order, shaped by load (the edges to load, see
// eager). It is the single implementation of the page arithmetic that REST
// v1 presents.
func paginate[T any, O ~func(*sql.Selector), Q listQuery[Q, T, O]](ctx context.Context, q Q, page, perPage *int, sort sortSpec, load func(Q) (Q, error)) ([]*T, *model.Pagination, error) {
	p, pp, err := pageArgs(page, perPage)
	if err != nil {
		return nil, nil, err
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("count: %w", err)
	}
	info := &model.Pagination{CurrentPage: p, PerPage: pp, Total: total, LastPage: 1}
	if q, err = load(q); err != nil {
		return nil, nil, err
	}
	for _, t := range sort.terms() {
		q = q.Order(O(t))
	}
	if pp != AllPages {
		info.LastPage = max(1, (total+pp-1)/pp)
		if (p-1)*pp >= total {
			return []*T{}, info, nil
		}
		q = q.Offset((p - 1) * pp).Limit(pp)
	}
	items, err := q.All(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("page: %w", err)
	}
	return items, info, nil
}

// one returns the single result of q, or NotFound naming what was sought.
func one[T any](ctx context.Context, q interface {
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

// relayLimit bounds Relay connections: without first or last they return
// the first DefaultRelayFirst records, and neither may exceed MaxRelayFirst.
func relayLimit(first, last *int) (*int, error) {
	for name, v := range map[string]*int{"first": first, "last": last} {
		if v != nil && (*v < 0 || *v > MaxRelayFirst) {
			return nil, apperr.Field(name, "%s must be between 0 and %d", name, MaxRelayFirst)
		}
	}
	if first == nil && last == nil {
		n := DefaultRelayFirst
		return &n, nil
	}
	return first, nil
}

// Relay connection sizes; the spec does not cover the graph, so these
// follow common public GraphQL APIs.
const (
	DefaultRelayFirst = 100
	MaxRelayFirst     = 1000
)
