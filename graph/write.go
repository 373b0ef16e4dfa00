package graph

import (
	"context"
	"io"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/internal/valid"
)

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

// file is the content of an optional upload, nil when there is none.
func file(u *graphql.Upload) io.Reader {
	if u == nil {
		return nil
	}
	return u.File
}

// files is the content of a list of uploads.
func files(us []*graphql.Upload) []io.Reader {
	out := make([]io.Reader, len(us))
	for i, u := range us {
		out[i] = file(u)
	}
	return out
}
