package endpoint

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/viewer"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// presentError gives every GraphQL error an extensions.code and, for bad
// input, extensions.field: the input's name in GraphQL's spelling
// (graph.FieldName), also in the message. Errors gqlgen raised itself (parsing,
// validation, coercion) keep their message. A resolver error holding
// several faults becomes one GraphQL error each.
func presentError(ctx context.Context, err error) *gqlerror.Error {
	gerr := graphql.DefaultErrorPresenter(ctx, err)
	if gerr.Err == nil {
		if gerr.Extensions == nil || gerr.Extensions["code"] == nil {
			setExt(gerr, "code", string(apperr.Invalid))
		}
		if gerr.Extensions["code"] == errcode.ValidationFailed && viewer.FromContext(ctx) == nil {
			// Anonymous: the refusal of a variable names nothing of the
			// schema either (anonymousRule).
			gerr.Message, gerr.Locations, gerr.Rule = notValidAnonymousMessage, nil, ""
		}
		if field := variableField(ctx, gerr.Path); field != "" {
			setExt(gerr, "field", field)
		}
		tagRequest(ctx, gerr)
		return gerr
	}
	problems := problem.List(gerr.Err)
	if arg := argumentOf(ctx, gerr.Path); arg != "" && problems[0].Kind != apperr.Invalid {
		// A value of the client's that did not decode (a decoder of
		// entgql's or gqlgen's own): never a bug nor an outage, whatever
		// error (io.EOF...) the decoder gave.
		problems = []*apperr.Error{apperr.Field(graph.DomainName(lastName(gerr.Path)), "{} is malformed")}
	}
	for _, extra := range problems[1:] {
		graphql.AddError(ctx, extra)
	}
	ae := problems[0]
	switch ae.Kind {
	case apperr.Internal:
		slog.ErrorContext(ctx, "graphql resolver failed", "path", gerr.Path.String(), "err", gerr.Err)
	case apperr.Unavailable:
		slog.WarnContext(ctx, "graphql resolver unavailable", "path", gerr.Path.String(), "err", gerr.Err)
		noteOutage(ctx)
	}
	if ae.Field == "" && ae.Kind == apperr.Invalid {
		// A scalar does not know the argument it reads; gqlgen's path
		// names it.
		if name := lastName(gerr.Path); name != "" {
			c := *ae
			c.Field = graph.DomainName(name)
			ae = &c
		}
	}
	gerr.Message = ae.Render(graph.FieldName)
	setExt(gerr, "code", string(ae.Kind))
	if ae.Field != "" {
		setExt(gerr, "field", apperr.SpellPath(ae.Field, graph.FieldName))
	}
	tagRequest(ctx, gerr)
	return gerr
}

// variableField names the input a variable's refusal is about (gqlparser
// reports it at the path variable.NAME...): the innermost argument or
// input field the variable fills, or the innermost field of the path
// inside the variable's value, with the list indexes after it, such as
// perPage, name or configuratorPrintMap[1]. It is "" when p is not a
// variable's path.
func variableField(ctx context.Context, p ast.Path) string {
	if len(p) < 2 || p[0] != ast.PathName("variable") || !graphql.HasOperationContext(ctx) {
		return ""
	}
	name, _ := p[1].(ast.PathName)
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Doc == nil {
		return ""
	}
	field := filledBy(oc.Doc, oc.Operation.SelectionSet, string(name), map[string]bool{})
	for _, e := range p[2:] {
		switch e := e.(type) {
		case ast.PathName:
			field = string(e)
		case ast.PathIndex:
			if field != "" {
				field += fmt.Sprintf("[%d]", int(e))
			}
		}
	}
	return field
}

// filledBy returns the name of the first argument or input field of set
// whose value is the variable name, looking into fragments once each.
func filledBy(doc *ast.QueryDocument, set ast.SelectionSet, name string, seen map[string]bool) string {
	found := ""
	eachField(doc, set, seen, func(f *ast.Field) bool {
		if f == nil {
			return true
		}
		for _, a := range f.Arguments {
			if found = inValue(a.Name, a.Value, name); found != "" {
				return false
			}
		}
		found = filledBy(doc, f.SelectionSet, name, seen)
		return found == ""
	})
	return found
}

// inValue returns the innermost name under which v, the value of the
// argument or input field named at, holds the variable name.
func inValue(at string, v *ast.Value, name string) string {
	if v == nil {
		return ""
	}
	if v.Kind == ast.Variable {
		if v.Raw == name {
			return at
		}
		return ""
	}
	for _, c := range v.Children {
		inner := at
		if c.Name != "" {
			inner = c.Name
		}
		if f := inValue(inner, c.Value, name); f != "" {
			return f
		}
	}
	return ""
}

// argumentOf names the argument whose value an error is about, when the
// error was raised while gqlgen read the arguments of the field of ctx:
// its path is the field's, then the argument's name (and perhaps the
// keys and indexes inside the value).
func argumentOf(ctx context.Context, p ast.Path) string {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil {
		return ""
	}
	n := len(fc.Path())
	if len(p) <= n {
		return ""
	}
	name, ok := p[n].(ast.PathName)
	if !ok || fc.Field.Definition.Arguments.ForName(string(name)) == nil {
		return ""
	}
	return string(name)
}

func lastName(p ast.Path) string {
	for i := len(p) - 1; i >= 0; i-- {
		if n, ok := p[i].(ast.PathName); ok {
			return string(n)
		}
	}
	return ""
}

func setExt(e *gqlerror.Error, k string, v any) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions[k] = v
}

// recoverPanic logs a resolver panic and answers a generic internal error.
func recoverPanic(ctx context.Context, p any) error {
	slog.ErrorContext(ctx, "graphql resolver panicked", "panic", p)
	return apperr.E(apperr.Internal, "internal server error")
}

// Reject answers a GraphQL request refused before it runs (its token,
// its Idempotency-Key, its body) as a GraphQL response without data, with
// the kind's extensions.code and HTTP status (failureStatus): 401 with
// WWW-Authenticate for a refused token, 400 for a malformed header, 413
// for a body over its limit, 503 with Retry-After when the database could
// not be asked, and 500 (logged) for anything else.
func Reject(w http.ResponseWriter, r *http.Request, err error) {
	switch problem.Classify(err).Kind {
	case apperr.Unauthenticated, apperr.Invalid, apperr.TooLarge:
	case apperr.Unavailable:
		slog.WarnContext(r.Context(), "graphql request unavailable", "err", err)
	default:
		slog.ErrorContext(r.Context(), "graphql request refused", "err", err)
	}
	writeErrors(w, r, err)
}
