// Package telemetry traces the service with OpenTelemetry and exports the
// spans over OTLP/HTTP, when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Without it nothing is
// installed: no middleware, no gqlgen extension, no SQL driver wrapper,
// so tracing that is off costs nothing (callers check Enabled).
//
// The spans of a request: the HTTP server span (Middleware, named after
// chi's route template), the GraphQL operation and each field that has a
// resolver (GraphQL), and each SQL statement (the database package wraps
// its driver with github.com/XSAM/otelsql when Enabled), whose text has
// bind parameters ($1, ?) in place of values. An incoming W3C traceparent
// is honoured. LogHandler writes the trace and request ids in every log
// line of a request.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ServiceName is the service.name of the spans unless OTEL_SERVICE_NAME
// (or service.name in OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const ServiceName = "catalogue"

// InstrumentationName names the tracer of the service's own spans.
const InstrumentationName = "github.com/configurator/catalogue"

var enabled atomic.Bool

// Enabled reports whether tracing is on in this process (Setup turned it
// on): the HTTP router, the GraphQL handler and the database install
// their instrumentation only then.
func Enabled() bool { return enabled.Load() }

// Setup turns tracing on when env names an OTLP endpoint, and returns the
// function that flushes the spans still buffered and turns it off again
// (call it last, at shutdown). Without an endpoint, or with
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, it does nothing and
// returns a no-op. Only OTLP over HTTP with protobuf bodies is built in:
// OTEL_EXPORTER_OTLP_PROTOCOL=grpc (or http/json) is refused with an
// error. The exporter's other standard variables (headers, timeout,
// compression, certificates) and the SDK's (OTEL_TRACES_SAMPLER,
// OTEL_BSP_*, OTEL_RESOURCE_ATTRIBUTES) are read from the process
// environment by the SDK itself.
func Setup(ctx context.Context, env func(string) string, version string, log *slog.Logger) (shutdown func(context.Context) error, err error) {
	off := func(context.Context) error { return nil }
	endpoint, err := TracesEndpoint(env)
	if err != nil || endpoint == "" {
		return off, err
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return off, fmt.Errorf("opentelemetry exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(ServiceName), semconv.ServiceVersion(version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return off, fmt.Errorf("opentelemetry resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("opentelemetry", "err", err)
	}))
	enabled.Store(true)
	log.Info("tracing", "otlp_endpoint", endpoint)
	return func(ctx context.Context) error {
		enabled.Store(false)
		err := tp.Shutdown(ctx)
		otel.SetTracerProvider(noop.NewTracerProvider())
		return err
	}, nil
}

// TracesEndpoint returns the URL spans are sent to: the standard
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, or
// OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended (the OTLP/HTTP
// rule), or "" when tracing is off. It refuses a protocol other than
// http/protobuf.
func TracesEndpoint(env func(string) string) (string, error) {
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(env("OTEL_TRACES_EXPORTER"), "none") {
		return "", nil
	}
	endpoint := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if base := env("OTEL_EXPORTER_OTLP_ENDPOINT"); endpoint == "" && base != "" {
		endpoint = strings.TrimRight(base, "/") + "/v1/traces"
	}
	if endpoint == "" {
		return "", nil
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := env(name); p != "" {
			if p != "http/protobuf" {
				return "", fmt.Errorf("%s=%s: only http/protobuf is supported (send to the collector's OTLP/HTTP port, usually 4318)", name, p)
			}
			break
		}
	}
	if !strings.HasPrefix(endpoint, "http://") && !strings.HasPrefix(endpoint, "https://") {
		return "", errors.New("OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL, such as http://otel-collector:4318")
	}
	return endpoint, nil
}

// tracer is the service's own tracer, looked up on each use so that it
// follows the provider Setup installs.
func tracer() trace.Tracer { return otel.Tracer(InstrumentationName) }
