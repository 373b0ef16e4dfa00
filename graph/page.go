package graph

import (
	"context"
	"strings"
	"time"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"

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

// pageArgs are the data layer's arguments of a page: its total is counted
// only when the caller will see it (always on REST, on GraphQL when the
// selection asks for pagination).
func pageArgs(ctx context.Context, page, perPage *int, sort query.Sort, total query.Total) query.Args {
	return query.Args{Page: page, PerPage: perPage, Sort: sort, Counted: selected(ctx, "pagination"), Total: total}
}

// pagination is a page's arithmetic in the graph's type.
func pagination(i query.Info) *model.Pagination {
	return &model.Pagination{CurrentPage: i.Page, PerPage: i.PerPage, Total: i.Total, LastPage: i.LastPage}
}

// selected reports whether the GraphQL selection of the current field
// asks for name; outside GraphQL (REST calls the resolvers directly) the
// whole answer is presented, so it is always true.
func selected(ctx context.Context, name string) bool {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !graphql.HasOperationContext(ctx) {
		return true
	}
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), fc.Field.Selections, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// filter applies where filters (ent's generated WhereInput.Filter; a nil
// or empty input filters nothing) one after the other: the client's where
// argument and the one the other arguments of a page query make.
func filter[Q any](q Q, filters ...func(Q) (Q, error)) (Q, error) {
	var err error
	for _, f := range filters {
		if q, err = f(q); err != nil {
			return q, err
		}
	}
	return q, nil
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
// the created_at filter of an order list (valid.Days).
func days(start, end *scalar.Date) (*ent.OrderWhereInput, error) {
	var s, e *time.Time
	if start != nil {
		s = &start.Time
	}
	if end != nil {
		e = &end.Time
	}
	from, until, err := valid.Days(s, e)
	return &ent.OrderWhereInput{CreatedAtGTE: from, CreatedAtLT: until}, err
}
