package endpoint

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// anonymousRule is what a request without a token may do, as a gqlgen
// extension: read share links (sharedConfigurator, whose key is its own
// credential) and __typename, and introspect the schema (__schema,
// __type, and a federation subgraph's _service) only when
// publicIntrospection is set. Any other operation is
// refused with UNAUTHENTICATED (401) before it is validated, so that
// validation messages do not describe the schema to a caller who may not
// introspect it. Requests with a token pass untouched; the ent privacy
// rules hold below it whatever this rule lets through.
type anonymousRule struct{ publicIntrospection bool }

var (
	_ graphql.HandlerExtension          = anonymousRule{}
	_ graphql.OperationParameterMutator = anonymousRule{}
)

func (anonymousRule) ExtensionName() string { return "AnonymousRule" }

func (anonymousRule) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters refuses an anonymous operation that selects
// anything else than the fields the rule allows at its root.
func (a anonymousRule) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if viewer.FromContext(ctx) != nil || a.allows(p.Query, p.OperationName) {
		return nil
	}
	return &gqlerror.Error{Err: apperr.ErrNoToken, Message: apperr.ErrNoToken.Error()}
}

// allows reports whether the chosen operation of query is a query that
// selects only allowed fields at its root, fragments included.
func (a anonymousRule) allows(query, operation string) bool {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return false
	}
	// ForName takes the one operation of a document when none is named.
	op := doc.Operations.ForName(operation)
	if op == nil || op.Operation != ast.Query || len(op.SelectionSet) == 0 {
		return false
	}
	return eachField(doc, op.SelectionSet, map[string]bool{}, func(f *ast.Field) bool {
		switch {
		case f == nil: // a spread of a fragment the document lacks
			return false
		case f.Name == "__typename" || f.Name == "sharedConfigurator":
			return true
		case f.Name == "__schema" || f.Name == "__type" || f.Name == "_service":
			// _service { sdl } is the schema as text, for federation
			// tools (docs/federation.md): introspection by another name.
			return a.publicIntrospection
		}
		return false
	})
}
