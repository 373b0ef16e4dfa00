package endpoint

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/scalar"
	"github.com/configurator/catalogue/internal/apperr"
)

// cursors is the gqlgen extension that reads every cursor of an operation
// (the after and before arguments of its connections, at any depth, as
// literals or variables) before anything runs, in the shape the
// connection writes for the sort its orderBy asks (scalar.ReadCursor with
// graph.CursorKind). The Cursor scalar reads them again when their field
// runs, but ent's eager loading of a connection nested in another's nodes
// reads its arguments with entgql's own decoder, unbounded, from the raw
// values: only this check comes before it. A malformed cursor is
// BAD_REQUEST naming its argument, and nothing of the operation runs.
type cursors struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = cursors{}

func (cursors) ExtensionName() string { return "Cursors" }

func (cursors) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext refuses the operation at its first malformed
// cursor.
func (cursors) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	var fault error
	seen := map[string]bool{}
	var visit func(f *ast.Field) bool
	visit = func(f *ast.Field) bool {
		if f == nil {
			return true
		}
		if fault = fieldCursors(f, op.Variables); fault != nil {
			return false
		}
		return eachField(op.Doc, f.SelectionSet, seen, visit)
	}
	eachField(op.Doc, op.Operation.SelectionSet, seen, visit)
	if fault != nil {
		return gqlError(fault)
	}
	return nil
}

// fieldCursors reads the cursor arguments of f, if it has any.
func fieldCursors(f *ast.Field, vars map[string]any) error {
	if f.Definition == nil {
		return nil
	}
	var args map[string]any
	for _, name := range [...]string{"after", "before"} {
		def := f.Definition.Arguments.ForName(name)
		if def == nil || def.Type.Name() != "Cursor" {
			continue
		}
		if args == nil {
			args = f.ArgumentMap(vars)
		}
		v := args[name]
		if v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return apperr.Field(name, "{} must be a cursor (a string)")
		}
		if _, err := scalar.ReadCursor(name, s, sortKind(f, args)); err != nil {
			return err
		}
	}
	return nil
}

// sortKind is the kind of the sort key of f's cursors: that of the field
// its orderBy argument names, or of the default sort (by id).
func sortKind(f *ast.Field, args map[string]any) scalar.SortKind {
	def := f.Definition.Arguments.ForName("orderBy")
	if def == nil {
		return graph.CursorKind("", "")
	}
	var field string
	if o, ok := args["orderBy"].(map[string]any); ok {
		field, _ = o["field"].(string)
	}
	return graph.CursorKind(def.Type.Name(), field)
}
