package endpoint

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// anonymousRule is what a request without a token may do, as a gqlgen
// extension: read share links (sharedConfigurator, whose key is its own
// credential) and __typename, and introspect the schema (__schema,
// __type) only when publicIntrospection is set. A document any of whose
// operations selects anything else at its root is refused with
// UNAUTHENTICATED (401) before it is validated, and an allowed document
// that does not validate is refused with one error that says so and no
// more (notValidAnonymous): an anonymous caller learns nothing of the
// schema from any operation or fragment of its document, neither a name
// nor a suggestion, nor which or how many of its parts are wrong.
// Requests with a token pass untouched and keep gqlparser's messages;
// the ent privacy rules hold below it whatever this rule lets through.
type anonymousRule struct {
	publicIntrospection bool
	schema              *ast.Schema
}

var (
	_ graphql.HandlerExtension          = (*anonymousRule)(nil)
	_ graphql.OperationParameterMutator = (*anonymousRule)(nil)
)

func (*anonymousRule) ExtensionName() string { return "AnonymousRule" }

// Validate keeps the schema, against which anonymous documents are
// validated before gqlgen does.
func (a *anonymousRule) Validate(es graphql.ExecutableSchema) error {
	a.schema = es.Schema()
	return nil
}

// MutateOperationParameters refuses an anonymous document that selects
// anything else than the fields the rule allows at the root of any of
// its operations (or that does not parse), and one that does not
// validate.
func (a *anonymousRule) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if viewer.FromContext(ctx) != nil {
		return nil
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: p.Query})
	if err != nil || !a.allows(doc) {
		return &gqlerror.Error{Err: apperr.ErrNoToken, Message: apperr.ErrNoToken.Error()}
	}
	if a.schema != nil && len(validator.ValidateWithRules(a.schema, doc, validationRules())) > 0 {
		return notValidAnonymous()
	}
	return nil
}

// notValidAnonymousMessage is the one validation message an anonymous
// caller gets, whatever is wrong with its document (presentError gives
// it to the refusals of its variables too).
const notValidAnonymousMessage = "the document is not valid; a caller without a token is not told why: send a token to see the validation messages"

func notValidAnonymous() *gqlerror.Error {
	e := &gqlerror.Error{Message: notValidAnonymousMessage}
	errcode.Set(e, errcode.ValidationFailed)
	return e
}

// allows reports whether every operation of doc is a query that selects
// only allowed fields at its root, fragments included.
func (a *anonymousRule) allows(doc *ast.QueryDocument) bool {
	if len(doc.Operations) == 0 {
		return false
	}
	for _, op := range doc.Operations {
		if op.Operation != ast.Query || len(op.SelectionSet) == 0 {
			return false
		}
		ok := eachField(doc, op.SelectionSet, map[string]bool{}, func(f *ast.Field) bool {
			switch {
			case f == nil: // a spread of a fragment the document lacks
				return false
			case f.Name == "__typename" || f.Name == "sharedConfigurator":
				return true
			case f.Name == "__schema" || f.Name == "__type":
				return a.publicIntrospection
			}
			return false
		})
		if !ok {
			return false
		}
	}
	return true
}
