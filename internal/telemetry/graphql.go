package telemetry

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// GraphQL is the gqlgen extension that traces an operation (a span named
// "query Name", "mutation" for an anonymous one, with
// graphql.operation.name and .type; never the document, whose literals
// may hold client data) and, under it, every field that has a resolver
// ("Query.ordersPage", "Order.configurator"): the fields whose work may
// reach the database. Plain struct fields get no span, which keeps a list
// of a hundred rows from becoming thousands of spans. Register it only
// when Enabled, before other field interceptors, so that its spans
// enclose theirs.
type GraphQL struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
	graphql.FieldInterceptor
} = GraphQL{}

// ExtensionName names the extension in gqlgen's errors.
func (GraphQL) ExtensionName() string { return "Tracing" }

// Validate accepts every schema.
func (GraphQL) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptResponse spans the execution of a valid operation; a request
// that failed to parse or validate has only its HTTP span.
func (GraphQL) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	op := graphql.GetOperationContext(ctx).Operation
	if op == nil {
		return next(ctx)
	}
	name := string(op.Operation)
	attrs := []attribute.KeyValue{semconv.GraphQLOperationTypeKey.String(name)}
	if op.Name != "" {
		name += " " + op.Name
		attrs = append(attrs, semconv.GraphQLOperationName(op.Name))
	}
	ctx, span := tracer().Start(ctx, name, trace.WithAttributes(attrs...))
	defer span.End()
	resp := next(ctx)
	if resp != nil && len(resp.Errors) > 0 {
		span.SetAttributes(attribute.Int("graphql.errors", len(resp.Errors)))
		span.SetStatus(codes.Error, resp.Errors[0].Message)
	}
	return resp
}

// InterceptField spans a field that has a resolver.
func (GraphQL) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !fc.IsResolver {
		return next(ctx)
	}
	ctx, span := tracer().Start(ctx, fc.Object+"."+fc.Field.Name, trace.WithAttributes(
		attribute.String("graphql.field.name", fc.Field.Name),
		attribute.String("graphql.field.path", fc.Path().String()),
	))
	defer span.End()
	res, err := next(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "resolver failed")
	}
	return res, err
}
