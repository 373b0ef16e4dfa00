package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// otlpReceiver is an OTLP/HTTP collector in the test: it decodes every
// export request (protobuf) and keeps the spans and the raw bodies.
type otlpReceiver struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
	raw      [][]byte
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want OTLP/HTTP protobuf at /v1/traces", http.StatusNotFound)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	o.raw = append(o.raw, b)
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				o.services = append(o.services, a.Value.GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			if v := a.Value.GetStringValue(); v != "" {
				return v
			}
			if v := a.Value.GetIntValue(); v != 0 {
				return strconv.FormatInt(v, 10)
			}
		}
	}
	return ""
}

// TestTracing runs the real server with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at an OTLP/HTTP receiver in the test, sends a REST and a
// GraphQL request (the first with a W3C traceparent), stops the server
// (which sends the spans still buffered) and checks the spans: the
// server span continues the caller's trace and is named after the route
// template; the GraphQL operation span is its child and the resolver
// field span the operation's; SQL statements are spans below them, with
// bind parameters and never the values; the log lines carry the trace id
// and the request id.
func TestTracing(t *testing.T) {
	for _, b := range dbtest.Backends() {
		t.Run(b.Name, func(t *testing.T) { testTracing(t, b) })
	}
}

func testTracing(t *testing.T, b dbtest.Backend) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()

	addr := testkit.FreeAddr(t)
	base := "http://" + addr
	env := map[string]string{
		"ADDR": addr, "DATABASE_URL": b.URL(t), "UPLOAD_DIR": t.TempDir(), "DEMO": "true",
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
	}
	if b.Name == "sqlite" {
		env["DATABASE_URL"] = "sqlite://" + filepath.Join(t.TempDir(), "c.db")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testkit.SyncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, nil, func(k string) string { return env[k] }, &stdout, &stderr) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("serve exited %d\n%s", code, stderr.String())
			}
		}
	}
	defer stop()
	waitReady(t, base)
	m := tokenRE.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no demo token printed:\n%s", stdout.String())
	}
	token := m[1]

	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest(http.MethodGet, base+"/api/open-api/v1/materials/1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
	req.Header.Set("X-Request-Id", "rest-trace-1")
	expect(t, req, http.StatusOK)

	// The filter's value must reach the database as a parameter and never
	// appear in a span.
	const secret = "zq-secret-7781"
	gql := `{"query":"query Mats($w: MaterialWhereInput) { materials(first: 2, where: $w) { totalCount edges { node { id name category { title } } } } }",` +
		`"variables":{"w":{"nameContains":"` + secret + `"}}}`
	req, _ = http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(gql))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "gql-trace-1")
	if body := expect(t, req, http.StatusOK); !strings.Contains(body, `"totalCount":0`) {
		t.Errorf("GraphQL answered %s; want an empty page", body)
	}

	stop() // flushes the batch of spans
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.spans) == 0 {
		t.Fatalf("the receiver got no spans\n%s", stderr.String())
	}
	for _, s := range recv.services {
		if s != "catalogue" {
			t.Errorf("service.name %q; want catalogue", s)
		}
	}
	byID := map[string]*tracepb.Span{}
	for _, s := range recv.spans {
		byID[hex.EncodeToString(s.SpanId)] = s
	}
	find := func(name string) *tracepb.Span {
		t.Helper()
		for _, s := range recv.spans {
			if s.Name == name {
				return s
			}
		}
		var names []string
		for _, s := range recv.spans {
			names = append(names, s.Name)
		}
		t.Fatalf("no span %q among %q", name, names)
		return nil
	}
	parentOf := func(s *tracepb.Span) *tracepb.Span { return byID[hex.EncodeToString(s.ParentSpanId)] }
	// below lists the SQL spans whose chain of parents reaches top.
	below := func(top *tracepb.Span) []*tracepb.Span {
		var out []*tracepb.Span
		for _, s := range recv.spans {
			if attr(s, "db.system.name") == "" {
				continue
			}
			for p := parentOf(s); p != nil; p = parentOf(p) {
				if p == top {
					out = append(out, s)
					break
				}
			}
		}
		return out
	}

	// REST: the caller's trace continues; the span is named by route.
	rest := find("GET /api/open-api/v1/materials/{id}")
	if got := hex.EncodeToString(rest.TraceId); got != callerTrace {
		t.Errorf("REST span trace %s; want the caller's %s", got, callerTrace)
	}
	if got := hex.EncodeToString(rest.ParentSpanId); got != callerSpan {
		t.Errorf("REST span parent %s; want the caller's span %s", got, callerSpan)
	}
	if rest.Kind != tracepb.Span_SPAN_KIND_SERVER || attr(rest, "http.route") != "/api/open-api/v1/materials/{id}" ||
		attr(rest, "http.response.status_code") != "200" {
		t.Errorf("REST span: kind %v, http.route %q, status %q", rest.Kind, attr(rest, "http.route"), attr(rest, "http.response.status_code"))
	}
	restSQL := below(rest)
	if len(restSQL) == 0 {
		t.Errorf("no SQL span below the REST request")
	}

	// GraphQL: HTTP span > operation span > field span > SQL spans.
	server := find("POST /graphql")
	op := find("query Mats")
	field := find("Query.materials")
	if parentOf(op) != server || parentOf(field) != op {
		t.Errorf("GraphQL spans are not nested: operation's parent %v, field's parent %v", parentOf(op).GetName(), parentOf(field).GetName())
	}
	if attr(op, "graphql.operation.name") != "Mats" || attr(op, "graphql.operation.type") != "query" {
		t.Errorf("operation span attributes: %v", op.Attributes)
	}
	for _, s := range recv.spans {
		if strings.HasPrefix(s.Name, "Material.") && !strings.HasSuffix(s.Name, ".category") {
			t.Errorf("a span for a plain field: %s", s.Name)
		}
	}
	gqlSQL := below(field)
	if len(gqlSQL) == 0 {
		t.Fatalf("no SQL span below the resolver field")
	}
	placeholder := regexp.MustCompile(`\$\d|\?`)
	sawFilter := false
	for _, s := range append(restSQL, gqlSQL...) {
		// db.statement; db.query.text under OTEL_SEMCONV_STABILITY_OPT_IN=database.
		q := attr(s, "db.statement") + attr(s, "db.query.text")
		if q == "" || !placeholder.MatchString(q) && strings.Contains(q, "WHERE") {
			t.Errorf("SQL span %s: statement %q; want the text with bind parameters", s.Name, q)
		}
		if strings.Contains(q, "LIKE") {
			sawFilter = true
		}
	}
	if !sawFilter {
		t.Errorf("no SQL span shows the filtered statement (LIKE with a parameter)")
	}
	for _, raw := range recv.raw {
		if bytes.Contains(raw, []byte(secret)) {
			t.Fatalf("a parameter value (%s) reached the exported spans", secret)
		}
	}

	// The log lines of both requests carry their request and trace ids.
	logs := stderr.String()
	for id, trace := range map[string]string{"rest-trace-1": callerTrace, "gql-trace-1": hex.EncodeToString(server.TraceId)} {
		re := regexp.MustCompile(`msg=request .*request_id=` + id + ` trace_id=` + trace + ` span_id=[0-9a-f]{16}`)
		if !re.MatchString(logs) {
			t.Errorf("no request log line with request_id=%s trace_id=%s:\n%s", id, trace, logs)
		}
	}
}

// expect does req and returns the body, failing on another status.
func expect(t *testing.T, req *http.Request, status int) string {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		t.Fatalf("%s %s = %d; want %d: %s", req.Method, req.URL.Path, res.StatusCode, status, b)
	}
	return string(b)
}
