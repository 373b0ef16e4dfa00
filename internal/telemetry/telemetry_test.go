package telemetry_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/configurator/catalogue/internal/requestid"
	"github.com/configurator/catalogue/internal/telemetry"
)

func TestTracesEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"off without an endpoint", nil, "", ""},
		{"base endpoint gets the traces path", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, "http://collector:4318/v1/traces", ""},
		{"base endpoint with a path and a slash", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example/otlp/"}, "https://otel.example/otlp/v1/traces", ""},
		{"traces endpoint used as it is", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:4318/custom"}, "http://b:4318/custom", ""},
		{"http/protobuf accepted", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, "http://c:4318/v1/traces", ""},
		{"grpc refused", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "", "only http/protobuf"},
		{"traces protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, "http://c:4318/v1/traces", ""},
		{"not a URL", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "", "http:// or https://"},
		{"SDK disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, "", ""},
		{"exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := telemetry.TracesEndpoint(func(k string) string { return tc.env[k] })
			if got != tc.want || (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("TracesEndpoint = %q, %v; want %q, an error containing %q", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestSetupOff: without an endpoint nothing is installed.
func TestSetupOff(t *testing.T) {
	stop, err := telemetry.Setup(context.Background(), func(string) string { return "" }, "v0", slog.Default())
	if err != nil || telemetry.Enabled() {
		t.Fatalf("Setup without an endpoint: %v, enabled %t; want off", err, telemetry.Enabled())
	}
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(&buf, nil))).With("component", "test")
	ctx := requestid.NewContext(context.Background(), "req-7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:  trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
	})
	log.InfoContext(trace.ContextWithSpanContext(ctx, sc), "traced")
	log.InfoContext(ctx, "untraced")
	log.Info("outside a request")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for i, want := range []string{
		"msg=traced component=test request_id=req-7 trace_id=0102030405060708090a0b0c0d0e0f10 span_id=0102030405060708",
		"msg=untraced component=test request_id=req-7",
		"msg=\"outside a request\" component=test",
	} {
		if i >= len(lines) || !strings.HasSuffix(lines[i], want) {
			t.Errorf("line %d = %q; want it to end with %q", i, lines[i], want)
		}
	}
}
