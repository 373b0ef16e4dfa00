package endpoint

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/edge"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/valid"
)

// Media types of GraphQL requests and answers (GraphQL over HTTP
// specification, GraphQL over Server-Sent Events).
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
	mediaEventStream     = "text/event-stream"
)

// answer is what a request is answered with, chosen once from its Accept
// header by negotiate for every transport: the JSON media type of its
// answer, and whether its answer is an event stream instead.
type answer struct {
	// media is the JSON media type of the answer: application/json or
	// application/graphql-response+json, "" when the client accepts
	// neither.
	media string
	// canStream is whether the client names text/event-stream (or text/*)
	// as acceptable; a wildcard */* alone never selects a stream, which a
	// client that did not ask for one would wait on.
	canStream bool
	// stream is whether the event stream is preferred: the client accepts
	// it more than any JSON answer, or accepts no JSON answer at all.
	stream bool
}

// acceptance is how much an Accept header admits one media type: the
// quality (in thousandths) of the most specific media range matching it
// (RFC 9110 section 12.5.1), that range's specificity (0: none matches,
// 1: */*, 2: type/*, 3: the type itself) and its position in the header.
type acceptance struct{ q, spec, pos int }

// negotiate chooses the answer to a request with the Accept header
// accept. JSON is chosen whenever the client accepts it at least as much
// as an event stream: the JSON type of the higher quality, then of the
// more specific range, then named first; on a full tie (a wildcard) or
// without Accept, application/json, as the GraphQL over HTTP
// specification asks for legacy clients. q=0 excludes a type; an
// unparsable element counts for nothing.
func negotiate(accept string) answer {
	if strings.TrimSpace(accept) == "" {
		return answer{media: mediaJSON}
	}
	var gr, js, es acceptance
	pos := 0
	for part := range strings.SplitSeq(accept, ",") {
		pos++
		typ, sub, q, ok := mediaRange(part)
		if !ok {
			continue
		}
		for _, o := range [...]struct {
			acc      *acceptance
			typ, sub string
		}{{&gr, "application", "graphql-response+json"}, {&js, "application", "json"}, {&es, "text", "event-stream"}} {
			spec := 0
			switch {
			case typ == "*" && sub == "*":
				spec = 1
			case typ == o.typ && sub == "*":
				spec = 2
			case typ == o.typ && sub == o.sub:
				spec = 3
			}
			if spec > o.acc.spec {
				*o.acc = acceptance{q: q, spec: spec, pos: pos}
			}
		}
	}
	var a answer
	jsonQ := 0
	grOK, jsOK := gr.spec > 0 && gr.q > 0, js.spec > 0 && js.q > 0
	switch {
	case grOK && (!jsOK || gr.q > js.q || gr.q == js.q && (gr.spec > js.spec || gr.spec == 3 && js.spec == 3 && gr.pos < js.pos)):
		a.media, jsonQ = mediaGraphQLResponse, gr.q
	case jsOK:
		a.media, jsonQ = mediaJSON, js.q
	}
	a.canStream = es.spec >= 2 && es.q > 0
	a.stream = a.canStream && es.q > jsonQ
	return a
}

// mediaRange parses one element of an Accept header: its type and
// subtype in lower case and its quality in thousandths (1000 without q).
func mediaRange(s string) (typ, sub string, q int, ok bool) {
	s = strings.TrimSpace(s)
	mt, params, _ := strings.Cut(s, ";")
	typ, sub, ok = strings.Cut(strings.ToLower(strings.TrimSpace(mt)), "/")
	if !ok || typ == "" || sub == "" || typ == "*" && sub != "*" {
		return "", "", 0, false
	}
	q = 1000
	for p := range strings.SplitSeq(params, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		if q, ok = qvalue(strings.TrimSpace(value)); !ok {
			return "", "", 0, false
		}
		break
	}
	return typ, sub, q, true
}

// qvalue parses a quality value (RFC 9110: 0 to 1 with at most three
// decimals) into thousandths.
func qvalue(s string) (int, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole != "0" && whole != "1" || len(frac) > 3 || strings.Trim(frac, "0123456789") != "" {
		return 0, false
	}
	q, _ := strconv.Atoi(whole + (frac + "000")[:3])
	return q, q <= 1000
}

// exchange serves every GraphQL request that is not a WebSocket upgrade,
// through gqlgen's own transports (GET, POST, multipart and Server-Sent
// Events), and writes every answer itself, so that its status, media type
// and errors are decided once, in one place, for all of them:
//
//   - the answer is JSON or an event stream as negotiate decides from
//     Accept, whichever transport would take the request; a subscription
//     goes to the stream when the client accepts one at all, and is
//     refused at once (SUBSCRIPTION_NEEDS_STREAM) when it accepts JSON
//     only;
//   - a request that is not a GraphQL request (a body that is not a JSON
//     object, no query, variables that are not an object, a malformed
//     multipart form) is 400 whatever the client accepts, an over-size
//     body 413, and an error message quotes at most a short clip of what
//     the client sent;
//   - a request that fails before it executes (parse, validation,
//     variable coercion) is 200 when the client accepts application/json
//     and 4xx with application/graphql-response+json, and its answer has
//     no data entry (failureStatus); on an event stream these errors are
//     its one next event, as GraphQL over Server-Sent Events asks;
//   - a request that executes is 200 with its data, errors or not, and a
//     query sent with GET gets an ETag (writeResponse);
//   - a mutation sent with GET is 405, an unsupported body 415, an Accept
//     no answer satisfies 406.
//
// The request is read and its operation prepared (parsed, validated,
// limited) once. A JSON answer is then run directly (run); an event stream
// and a multipart request go through gqlgen's transport, whose own parsing
// sees an empty request (the stream) and whose answer is replaced by the
// exchange's (captureWriter), so that they keep their flow while none of
// their statuses or messages reach a client.
type exchange struct {
	multipart transport.MultipartForm
	sse       transport.SSE
}

var _ graphql.Transport = exchange{}

// Supports takes every request the transports registered before it
// (OPTIONS, WebSocket) do not.
func (exchange) Supports(*http.Request) bool { return true }

func (x exchange) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if up := r.Header.Get("Upgrade"); up != "" {
		writeErrors(w, r, apperr.E(apperr.Invalid, "an upgrade to %q is not served: subscriptions use a WebSocket (graphql-transport-ws) or Server-Sent Events (POST with Accept: text/event-stream)", clip(up)))
		return
	}
	if err := valid.MediaHeaders(r.Header); err != nil {
		// Answered in JSON: the Accept may be what is refused.
		writeFailure(w, r, mediaJSON, problem.Status(apperr.KindOf(err)), &graphql.Response{Errors: gqlerror.List{asGraphQLError(err)}})
		return
	}
	ans := negotiate(r.Header.Get("Accept"))
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case r.Method == http.MethodGet || r.Method == http.MethodPost && ct == mediaJSON:
		x.serveJSON(w, r, exec, ans)
	case r.Method == http.MethodPost && ct == "multipart/form-data":
		x.serveMultipart(w, r, exec, ans)
	default:
		ct := cmp.Or(r.Header.Get("Content-Type"), "(none)")
		writeErrors(w, r, apperr.E(apperr.Unsupported, "Content-Type %s is not supported: send application/json, or multipart/form-data for uploads", clip(ct)))
	}
}

// serveJSON answers a GET or a POST with a JSON body.
func (x exchange) serveJSON(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, ans answer) {
	post := r.Method == http.MethodPost
	if ans.media == "" && !(post && ans.canStream) {
		notAcceptable(w, r)
		return
	}
	// When only a stream is acceptable, what fails before the stream is
	// JSON all the same.
	media := cmp.Or(ans.media, mediaJSON)
	start := graphql.Now()
	params, err := readParams(r)
	if err != nil {
		writeFailure(w, r, media, failureStatus(media, err), &graphql.Response{Errors: gqlerror.List{asGraphQLError(err)}})
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ex := &exchangeExecutor{GraphExecutor: exec}
	ex.prepare(r.Context(), params)
	op := ex.operation()
	if post && ans.canStream && (ans.stream || op == ast.Subscription) {
		if op == ast.Subscription {
			// Its body read, a subscription lives as long as its client,
			// beyond the request deadline and out of the queue of work.
			r = r.WithContext(edge.Lift(r.Context()))
		}
		// The stream takes the GraphQL request read already.
		r.Body = io.NopCloser(strings.NewReader("{}"))
		x.sse.Do(w, r, ex)
		return
	}
	switch {
	case op == ast.Subscription:
		writeFailure(w, r, media, failureStatus(media, errNeedsStream), &graphql.Response{Errors: gqlerror.List{asGraphQLError(errNeedsStream)}})
		return
	case !post && ex.errs == nil && op != ast.Query:
		w.Header().Set("Allow", http.MethodPost)
		err := apperr.E(apperr.MethodNotAllowed, "a %s must be sent with POST; GET runs queries only", string(op))
		writeFailure(w, r, media, failureStatus(media, err), &graphql.Response{Errors: gqlerror.List{asGraphQLError(err)}})
		return
	}
	ex.capture = true
	ex.run(r.Context())
	ex.answer(w, r, media, nil)
}

// serveMultipart answers a multipart request (uploads), which gqlgen's
// transport reads: its form is streamed, the files kept as they arrive.
func (x exchange) serveMultipart(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, ans answer) {
	if ans.media == "" {
		notAcceptable(w, r)
		return
	}
	body := &bodyReader{ReadCloser: r.Body}
	r.Body = body
	parts := valid.BoundParts(r)
	cw := &captureWriter{header: w.Header(), keep: true}
	ex := &exchangeExecutor{GraphExecutor: exec, capture: true}
	x.multipart.Do(cw, r, ex)
	if err := parts.Err(); err != nil {
		writeErrors(w, r, err)
		return
	}
	if body.tooLarge != nil {
		writeErrors(w, r, valid.TooLarge(body.tooLarge.Limit))
		return
	}
	ex.answer(w, r, ans.media, cw)
}

// errNeedsStream refuses a subscription sent over a request whose answer
// cannot stream.
var errNeedsStream = apperr.E(apperr.SubscriptionNeedsStream,
	"a subscription needs an answer that streams its events: open a WebSocket (graphql-transport-ws) at /graphql, or POST it with Accept: text/event-stream")

// exchangeExecutor is the executor the exchange hands gqlgen's
// transports: it prepares the operation once (prepare) and, when it
// captures, keeps what the transport would have written (the response,
// or the errors that stopped the request) for the exchange to answer.
type exchangeExecutor struct {
	graphql.GraphExecutor
	prepared bool
	rc       *graphql.OperationContext
	errs     gqlerror.List
	capture  bool
	// failed is the answer to errs, resp the answer of the operation;
	// dispatched says that resp is set (nil is gqlgen's answer to a
	// request whose context ended before it ran).
	failed     *graphql.Response
	resp       *graphql.Response
	dispatched bool
}

func (e *exchangeExecutor) prepare(ctx context.Context, params *graphql.RawParams) {
	e.rc, e.errs = e.GraphExecutor.CreateOperationContext(ctx, params)
	e.prepared = true
}

// operation is the type of the prepared operation, "" when it has none.
func (e *exchangeExecutor) operation() ast.Operation {
	if e.errs != nil || e.rc == nil || e.rc.Operation == nil {
		return ""
	}
	return e.rc.Operation.Operation
}

// CreateOperationContext returns the operation prepared already, or
// creates it (multipart requests); a subscription is refused unless the
// answer streams.
func (e *exchangeExecutor) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	if !e.prepared {
		e.prepare(ctx, params)
		if e.operation() == ast.Subscription {
			e.errs = gqlerror.List{{Message: errNeedsStream.Error(), Err: errNeedsStream}}
		}
	}
	return e.rc, e.errs
}

// DispatchError presents errs (gqlgen's executor runs the error
// presenter and the extensions), keeping the answer when capturing.
func (e *exchangeExecutor) DispatchError(ctx context.Context, errs gqlerror.List) *graphql.Response {
	resp := e.GraphExecutor.DispatchError(ctx, errs)
	if e.capture {
		e.errs, e.failed = errs, resp
		return &discarded
	}
	return resp
}

// DispatchOperation runs the operation; when capturing, its response is
// kept for the exchange and the transport gets an empty one to write.
func (e *exchangeExecutor) DispatchOperation(ctx context.Context, rc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	responses, ctx := e.GraphExecutor.DispatchOperation(ctx, rc)
	if !e.capture {
		return responses, ctx
	}
	return func(ctx context.Context) *graphql.Response {
		if e.dispatched {
			return nil
		}
		e.resp, e.dispatched = responses(ctx), true
		return &discarded
	}, ctx
}

// run does for a prepared JSON request what gqlgen's GET and POST
// transports do once they have read it, without their reading it again or
// writing an answer: the errors that stopped the operation are presented,
// or the operation runs; either is kept (capture) for answer.
func (e *exchangeExecutor) run(ctx context.Context) {
	rc, errs := e.CreateOperationContext(ctx, nil)
	if errs != nil {
		e.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		return
	}
	responses, ctx := e.DispatchOperation(ctx, rc)
	responses(ctx)
}

// discarded is what a capturing executor hands a transport to write: the
// exchange writes the real answer.
var discarded graphql.Response

// answer writes the answer to a request whose transport ran with cw (nil
// when none ran: run).
func (e *exchangeExecutor) answer(w http.ResponseWriter, r *http.Request, media string, cw *captureWriter) {
	switch {
	case e.failed != nil:
		writeFailure(w, r, media, failureStatus(media, e.errs), e.failed)
	case e.dispatched:
		writeResponse(w, r, media, e.resp)
	default:
		// The transport refused the request itself (a malformed
		// multipart form): its message, clipped, as a BAD_REQUEST.
		msg := "the request could not be read"
		var body struct{ Errors []struct{ Message string } }
		if cw != nil && json.Unmarshal(cw.body, &body) == nil && len(body.Errors) > 0 {
			msg = body.Errors[0].Message
		}
		err := apperr.E(apperr.Invalid, "the multipart request is malformed (%s): send the operations part, then the map part, then the files (GraphQL multipart request specification)", clip(msg))
		writeFailure(w, r, media, failureStatus(media, err), &graphql.Response{Errors: gqlerror.List{asGraphQLError(err)}})
	}
}

// captureWriter is the writer a transport gets when the exchange answers
// for it: the headers are the answer's own, the status and body are
// dropped (keep: the body is kept, for a transport's own refusal).
type captureWriter struct {
	header http.Header
	keep   bool
	body   []byte
}

func (c *captureWriter) Header() http.Header { return c.header }

func (c *captureWriter) WriteHeader(int) {}

func (c *captureWriter) Write(p []byte) (int, error) {
	if c.keep && len(c.body) < 4096 {
		c.body = append(c.body, p...)
	}
	return len(p), nil
}

// bodyReader notes that a body ran over its limit (limitBody's
// MaxBytesReader) while a transport read it.
type bodyReader struct {
	io.ReadCloser
	tooLarge *http.MaxBytesError
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		b.tooLarge = mbe
	}
	return n, err
}

// clipLength is the most of a client's input an error message quotes.
const clipLength = 64

// clip shortens s, something the client sent, to quote it in an answer
// or a log line: at most clipLength bytes and an ellipsis.
func clip(s string) string { return graph.Clip(s, clipLength, clipLength) }

// notAcceptable answers 406 to a request whose Accept admits no answer
// the endpoint gives, in application/json whatever it asked for.
func notAcceptable(w http.ResponseWriter, r *http.Request) {
	msg := "Accept %q admits no answer of this endpoint: accept application/json or application/graphql-response+json"
	if strings.Contains(r.Header.Get("Accept"), mediaEventStream) {
		msg += "; Server-Sent Events are served to POST requests with a JSON body"
	}
	writeFailure(w, r, mediaJSON, http.StatusNotAcceptable, &graphql.Response{Errors: gqlerror.List{asGraphQLError(apperr.E(apperr.NotAcceptable, msg, clip(r.Header.Get("Accept"))))}})
}
