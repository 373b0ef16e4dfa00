package endpoint

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/cost"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/metrics"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/valid"
	"github.com/configurator/catalogue/internal/viewer"
)

// The bounds of one GraphQL request, checked before anything runs. The
// document bounds are checked before gqlparser's validation (whose
// overlapping-fields rule is quadratic in the selections): the size of
// the text, then the walk of graph/cost over every operation and fragment
// with fragments expanded. GraphiQL's introspection query, the deepest a
// tool sends, nests 14 levels and selects about 220 fields.
const (
	// MaxDocumentBytes bounds the query text.
	MaxDocumentBytes = 64 << 10
	// MaxSelections bounds the fields and fragment spreads of an
	// operation or fragment, fragments expanded.
	MaxSelections = 1000
	// MaxDepth bounds the nesting of selections.
	MaxDepth = 15
	// MaxAliases bounds the aliased fields.
	MaxAliases = 100
	// MaxComplexity bounds an operation's complexity (graph/cost.Weights:
	// about the values its answer holds, rows multiplying their fields),
	// checked after validation with the request's variables: 1,000 rows of
	// up to 49 fields each.
	MaxComplexity = 50_000
	// ListRows is what a list of objects without a size argument (an
	// option's variations, a configurator's forms) is assumed to hold.
	ListRows = 20
)

// limits is the gqlgen extension that applies the bounds above and
// charges the operation to the request's rate-limit meter.
type limits struct {
	// parsed is gqlgen's query cache: a text found there was validated,
	// so it passed the walk before; the hot path does not parse again.
	parsed  graphql.Cache[*ast.QueryDocument]
	weights *cost.Weights
	// lim charges the operations of a WebSocket connection after its
	// first (operationMeter).
	lim ratelimit.Limiter
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
} = &limits{}

func (*limits) ExtensionName() string { return "Limits" }

// Validate prices the schema's fields once.
func (l *limits) Validate(es graphql.ExecutableSchema) error {
	l.weights = cost.NewWeights(es.Schema(), cost.Rows{
		First: graph.DefaultRelayFirst, PerPage: valid.DefaultPerPage, AllPages: valid.AllPagesCeiling, List: ListRows,
		MaxFirst: graph.MaxRelayFirst, MaxPerPage: valid.MaxPerPage,
	})
	return nil
}

// MutateOperationParameters refuses a document over the size or the
// walk's limits before gqlgen parses and validates it.
func (l *limits) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if _, ok := l.parsed.Get(ctx, p.Query); ok {
		return nil
	}
	if len(p.Query) > MaxDocumentBytes {
		return tooComplex("the document is %d bytes; the limit is %d", len(p.Query), MaxDocumentBytes)
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: p.Query})
	if err != nil {
		return nil // gqlgen parses it again and reports the error
	}
	if err := cost.Check(doc, cost.Limits{Selections: MaxSelections, Depth: MaxDepth, Aliases: MaxAliases}); err != nil {
		return tooComplex("%s", err.Error())
	}
	return nil
}

// MutateOperationContext refuses an operation over MaxComplexity, then
// takes what it costs from the caller's budget. Its complexity goes to
// the metrics (graphql_operation_cost), refused or not.
func (l *limits) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	points := l.weights.Complexity(op.Operation, op.Variables)
	metrics.NoteCost(ctx, float64(points))
	if points > MaxComplexity {
		return tooComplex("the operation's complexity is %d; the limit is %d: ask for fewer rows (first, last, perPage) or fewer fields", points, MaxComplexity)
	}
	writes := 0
	if op.Operation.Operation == ast.Mutation {
		writes = len(op.Operation.SelectionSet)
	}
	// The request's one charge: its whole cost, read units included.
	if err := l.operationMeter(ctx).Charge(ctx, ratelimit.OperationUnits(points, writes)); err != nil {
		metrics.NoteRateLimited(ctx)
		return gqlError(err)
	}
	return nil
}

func tooComplex(format string, args ...any) *gqlerror.Error {
	return gqlError(apperr.E(apperr.TooComplex, format, args...))
}

// gqlError is a request-level GraphQL error of an apperr kind; the
// presenter gives it its code, and the transport its status.
func gqlError(err error) *gqlerror.Error {
	return &gqlerror.Error{Err: err, Message: problem.Classify(err).Render(graph.FieldName)}
}

// meter charges every GraphQL request of a token to its budget in lim,
// once (ratelimit.Meter): the operation's cost when it gets that far
// (limits), ReadUnits for a request refused before it has an operation
// (chargeFailure, before its failure is answered), and ReadUnits after
// the answer for one that nothing charged, so that even a request refused
// as malformed costs something and every request calls the limiter once
// (one round trip when the budgets are in Redis). A request over budget is
// answered 429 with Retry-After (the transport's status of a RateLimited
// error), and every answer carries the RateLimit-* headers. Anonymous
// requests (introspection, share links) are not metered; a nil lim meters
// nothing.
func meter(lim ratelimit.Limiter, next http.Handler) http.Handler {
	if lim == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := viewer.FromContext(r.Context())
		if v == nil || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		m := ratelimit.NewMeter(lim, ratelimit.Key(v.TokenID), w.Header())
		ctx := ratelimit.NewContext(r.Context(), m)
		next.ServeHTTP(w, r.WithContext(ctx))
		m.Charge(ctx, ratelimit.ReadUnits)
	})
}

// chargeFailure charges a request that failed before it had an operation
// (unless something charged it already) before its failure is answered;
// it returns the RateLimited error to answer instead when the budget
// holds less.
func chargeFailure(ctx context.Context) error {
	m := ratelimit.FromContext(ctx)
	if m.Charged() {
		return nil
	}
	err := m.Charge(ctx, ratelimit.ReadUnits)
	if err != nil {
		metrics.NoteRateLimited(ctx)
	}
	return err
}
