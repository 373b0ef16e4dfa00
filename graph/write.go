package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// visible answers NotFound, naming field when the input named the record,
// unless q (a query by id) finds a record the viewer can see. A write
// that points at another owner's record is refused before any file is
// stored; the privacy rules refuse it again on the write itself.
func (r *Resolver) visible(ctx context.Context, q interface {
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

// explicitNulls returns the fields of the input object argument arg that
// the client set to null (domain names): from the GraphQL operation's
// arguments and variables, or as REST passed them (valid.WithNulls). Generated
// inputs read an explicit null as absent; valid.Nulls gives it the meaning
// REST gives it.
func explicitNulls(ctx context.Context, arg string) []string {
	if fields, ok := valid.NullsOf(ctx); ok {
		return fields
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || !graphql.HasOperationContext(ctx) {
		return nil
	}
	a := fc.Field.Arguments.ForName(arg)
	if a == nil {
		return nil
	}
	v, err := a.Value.Value(graphql.GetOperationContext(ctx).Variables)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	var out []string
	for k, x := range m {
		if x == nil {
			out = append(out, DomainName(k))
		}
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }

// derefs returns the non-empty strings among ps.
func derefs(ps []*string) []string {
	var out []string
	for _, p := range ps {
		if p != nil && *p != "" {
			out = append(out, *p)
		}
	}
	return out
}
