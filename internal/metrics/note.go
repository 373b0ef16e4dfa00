package metrics

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Note collects what the parts of the service report about one request;
// the middleware puts it in the request's context and counts it when the
// request ends.
type Note struct {
	graphql           bool
	operation, opType string
	hasCost           bool
	cost              float64
	rateLimited       bool
	replayed          bool
}

type noteKey struct{}

// NewContext returns ctx with an empty Note for the request. The
// middleware adds one itself when it finds none; an outer middleware that
// copies the request anyway (the request id's) adds it with this, so that
// the request is copied once for both.
func NewContext(ctx context.Context) context.Context {
	return &noteContext{Context: ctx}
}

// noteContext carries a request's Note in the same allocation as the
// context node that holds it.
type noteContext struct {
	context.Context
	note Note
}

// Value returns the note for noteKey, and asks the parent for any other
// key (cancellation included, so context.WithCancel below it stays cheap).
func (c *noteContext) Value(key any) any {
	if key == (noteKey{}) {
		return &c.note
	}
	return c.Context.Value(key)
}

func noteOf(ctx context.Context) *Note {
	n, _ := ctx.Value(noteKey{}).(*Note)
	return n
}

// NoteRateLimited reports that the request of ctx was refused by a rate
// limit (counted in http_rate_limited_total). Outside a measured request
// it does nothing.
func NoteRateLimited(ctx context.Context) {
	if n := noteOf(ctx); n != nil {
		n.rateLimited = true
	}
}

// NoteReplayed reports that the request of ctx was answered with the
// stored response of an earlier one with the same Idempotency-Key
// (counted in http_idempotent_replays_total).
func NoteReplayed(ctx context.Context) {
	if n := noteOf(ctx); n != nil {
		n.replayed = true
	}
}

// NoteCost reports the computed cost of the GraphQL operation of ctx
// (observed in graphql_operation_cost when the request ends). It is the
// hook for the cost analysis: call it once the cost is known.
func NoteCost(ctx context.Context, cost float64) {
	if n := noteOf(ctx); n != nil {
		n.hasCost, n.cost = true, cost
	}
}

// GraphQL is the gqlgen extension that names the operation of a request
// for the middleware: Invalid until the document has parsed and
// validated, then the operation's name (or Anonymous) and type. Register
// it before extensions that may refuse a valid operation (complexity
// limits), so that a refused operation keeps its name.
type GraphQL struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
} = GraphQL{}

// ExtensionName names the extension in gqlgen's errors.
func (GraphQL) ExtensionName() string { return "Metrics" }

// Validate accepts every schema.
func (GraphQL) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters marks the request as GraphQL before its
// document is parsed: a document that fails stays Invalid.
func (GraphQL) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	if n := noteOf(ctx); n != nil {
		n.graphql, n.operation, n.opType = true, Invalid, UnknownType
	}
	return nil
}

// MutateOperationContext names the operation once gqlgen has validated
// its document and found the operation.
func (GraphQL) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	n := noteOf(ctx)
	if n == nil || oc.Operation == nil {
		return nil
	}
	n.graphql, n.operation, n.opType = true, oc.Operation.Name, string(oc.Operation.Operation)
	if n.operation == "" {
		n.operation = Anonymous
	}
	return nil
}
