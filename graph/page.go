package graph

import (
	"context"
	"strings"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/dialect/sql"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/graph/scalar"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/query"
	"github.com/configurator/catalogue/internal/valid"
)

// orderField is a generated ent order-field enum, such as ent.OrderOrderField.
type orderField interface{ String() string }

// sortOf turns the optional orderBy and order arguments into a sort of the
// data layer. The enum names of this schema are the upper-cased column
// names (ID, CREATED_AT, ...), which a test checks for every type.
func sortOf[F orderField](field *F, dir *entgql.OrderDirection, def query.Sort) (query.Sort, error) {
	s := def
	if field != nil {
		s.Column = strings.ToLower((*field).String())
	}
	if dir != nil {
		if err := dir.Validate(); err != nil {
			return s, apperr.Field("order", "{} must be ASC or DESC")
		}
		s.Desc = *dir == entgql.OrderDirectionDesc
	}
	return s, nil
}

// pageIn is what a page query is asked: its page and size, and its sort
// or the fault of its sort arguments (sortOf); bounded lists refuse
// perPage -1 (query.Args.Bounded).
type pageIn struct {
	page, perPage *int
	sort          query.Sort
	err           error
	bounded       bool
}

// paging is the pageIn of a page query's arguments: the sort of field and
// dir, def without them.
func paging[F orderField](page, perPage *int, field *F, dir *entgql.OrderDirection, def query.Sort) pageIn {
	sort, err := sortOf(field, dir, def)
	return pageIn{page: page, perPage: perPage, sort: sort, err: err}
}

// pageOf is the recipe of every page query: the sort, the filters one after
// the other (ent's generated WhereInput.Filter first, whose nil or empty
// input filters nothing), the page of q loaded as rd says (load; v1 loads
// the edges the v1 shape shows), its total counted as total says when rd
// shows it, and its pagination.
func pageOf[T any, O ~func(*sql.Selector), S query.Counter, Q query.PageQuery[Q, T, O, S]](ctx context.Context, q Q, rd Read, in pageIn, total query.Total, v1 func(Q) Q, filters ...func(Q) (Q, error)) ([]*T, *model.Pagination, error) {
	if in.err != nil {
		return nil, nil, in.err
	}
	var err error
	for _, f := range filters {
		if q, err = f(q); err != nil {
			return nil, nil, err
		}
	}
	args := query.Args{Page: in.page, PerPage: in.perPage, Sort: in.sort, Counted: rd.Total, Total: total, Bounded: in.bounded}
	data, info, err := query.Page[T, O, S](ctx, q, args, func(q Q) (Q, error) { return load(ctx, rd, q, v1) })
	if err != nil {
		return nil, nil, err
	}
	return data, &model.Pagination{CurrentPage: info.Page, PerPage: info.PerPage, Total: info.Total, LastPage: info.LastPage}, nil
}

// answer is a page query's answer: nil with its error.
func answer[P any](page *P, err error) (*P, error) {
	if err != nil {
		return nil, err
	}
	return page, nil
}

// relayLimit bounds Relay connections: without first or last they return
// the first DefaultRelayFirst records, and neither may exceed MaxRelayFirst.
func relayLimit(first, last *int) (*int, error) {
	for name, v := range map[string]*int{"first": first, "last": last} {
		if v != nil && (*v < 0 || *v > MaxRelayFirst) {
			return nil, apperr.Field(name, "{} must be between 0 and %d", MaxRelayFirst)
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

// days turns the startDate and endDate arguments (inclusive UTC days) into
// the created_at filter of an order list (valid.Days); nil, no filter,
// when there are neither (an OrderWhereInput is a kilobyte to allocate and
// walk for nothing on every default listing).
func days(start, end *scalar.Date) (*ent.OrderWhereInput, error) {
	var s, e *time.Time
	if start != nil {
		s = &start.Time
	}
	if end != nil {
		e = &end.Time
	}
	from, until, err := valid.Days(s, e)
	if from == nil && until == nil {
		return nil, err
	}
	return &ent.OrderWhereInput{CreatedAtGTE: from, CreatedAtLT: until}, err
}
