package endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/bufpool"
	"github.com/configurator/catalogue/internal/httpcache"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/valid"
)

// Media types of GraphQL requests and answers (GraphQL over HTTP
// specification).
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// httpTransport serves GraphQL over HTTP, GET and POST with a JSON body,
// as the GraphQL over HTTP specification asks (the graphql-http audit
// checks it, cmd/server TestGraphQLOverHTTPAudit):
//
//   - a request that is not a GraphQL request (unreadable JSON, no query,
//     variables that are not an object) is 400, whatever the client
//     accepts;
//   - a request that fails before it executes (parse, validation,
//     variable coercion) is 200 when the client accepts application/json
//     and 4xx with application/graphql-response+json, and its answer has
//     no data entry; an authentication failure is 401 and an over-size
//     body 413 in both;
//   - a request that executes is 200 with its data, errors or not;
//   - a mutation sent with GET is 405.
//
// gqlgen's own GET and POST transports answer 422 to the first kind of
// failure and always write "data": null.
type httpTransport struct{}

var _ graphql.Transport = httpTransport{}

// Supports takes GET and POST with a JSON body; multipart requests go to
// multipartTransport.
func (httpTransport) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return false
	}
	switch r.Method {
	case http.MethodGet:
		return true
	case http.MethodPost:
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		return mt == mediaJSON
	}
	return false
}

// Do runs one request.
func (httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if !acceptable(r) {
		notAcceptable(w, r)
		return
	}
	media := answerMedia(r)
	w.Header().Set("Content-Type", media)
	start := graphql.Now()
	params, err := readParams(r)
	if err != nil {
		writeFailure(w, r, media, failureStatus(media, err), &graphql.Response{Errors: gqlerror.List{asGraphQLError(err)}})
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ctx := r.Context()
	rc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		writeFailure(w, r, media, failureStatus(media, errs), resp)
		return
	}
	if r.Method == http.MethodGet && rc.Operation.Operation != ast.Query {
		w.Header().Set("Allow", http.MethodPost)
		writeFailure(w, r, media, http.StatusMethodNotAllowed, &graphql.Response{Errors: gqlerror.List{{
			Message:    "a " + string(rc.Operation.Operation) + " must be sent with POST; GET runs queries only",
			Extensions: map[string]any{"code": "METHOD_NOT_ALLOWED"},
		}}})
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	writeResponse(w, r, responses(ctx))
}

// readParams reads the GraphQL request of r: from the query string of a
// GET, from the JSON body of a POST. A documentId (persisted documents)
// is read beside the query (useDocumentID). A request that is not a
// GraphQL request is an Invalid error (400), a body over the limit
// TooLarge.
func readParams(r *http.Request) (*graphql.RawParams, error) {
	var body struct {
		graphql.RawParams
		DocumentID *string `json:"documentId"`
	}
	params := &body.RawParams
	if r.Method == http.MethodGet {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return nil, apperr.E(apperr.Invalid, "the query string is malformed")
		}
		params.Query, params.OperationName = q.Get("query"), q.Get("operationName")
		if q.Has("documentId") {
			id := q.Get("documentId")
			body.DocumentID = &id
		}
		for name, into := range map[string]*map[string]any{"variables": &params.Variables, "extensions": &params.Extensions} {
			if s := q.Get(name); s != "" {
				if err := decodeJSON(strings.NewReader(s), into); err != nil {
					return nil, apperr.E(apperr.Invalid, "%s must be a JSON object", name)
				}
			}
		}
	} else {
		raw, err := io.ReadAll(r.Body)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, valid.TooLarge(mbe.Limit)
		} else if err != nil {
			return nil, apperr.E(apperr.Invalid, "the request body cannot be read")
		}
		if err := decodeJSON(bytes.NewReader(raw), &body); err != nil {
			return nil, apperr.E(apperr.Invalid, "the body must be a JSON object with query or documentId (strings), and optionally operationName (a string), variables and extensions (objects)")
		}
	}
	if body.DocumentID != nil {
		if err := useDocumentID(params, *body.DocumentID); err != nil {
			return nil, err
		}
	}
	if params.Query == "" && params.Extensions["persistedQuery"] == nil {
		return nil, apperr.E(apperr.Invalid, "the request has no query")
	}
	return params, nil
}

// decodeJSON decodes one JSON value into v, numbers as json.Number (so
// that the scalars see what the client wrote), nothing after it.
func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// answerMedia is the media type of the answer: application/json when the
// client accepts it (or anything, or says nothing), else
// application/graphql-response+json, the specification's own.
func answerMedia(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return mediaJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		case mediaJSON, "*/*", "application/*":
			return mediaJSON
		}
	}
	return mediaGraphQLResponse
}

// httpLevel are the kinds whose HTTP status (problem.Status) a request
// that failed before it executed gets whatever the media type: the
// request is refused at the HTTP level rather than as a GraphQL document.
var httpLevel = map[apperr.Kind]bool{
	apperr.Unauthenticated: true,
	apperr.TooLarge:        true,
	apperr.Unsupported:     true,
	apperr.NotAcceptable:   true,
	apperr.RateLimited:     true,
	apperr.Unavailable:     true,
	apperr.Internal:        true,
	// A refusal of the server's policy, not of the document: 400 even
	// with application/json, so that it is not taken for a result.
	apperr.TrustedOnly: true,
}

// failureStatus is the status of a request that failed before it
// executed: the kind's own (httpStatusOf), 400 for a request that is not
// a GraphQL request, and otherwise, for a GraphQL request error, 200 with
// application/json and 400 with application/graphql-response+json.
func failureStatus(media string, err error) int {
	var kind apperr.Kind
	var gerrs gqlerror.List
	switch {
	case errors.As(err, &gerrs) && len(gerrs) > 0:
		kind = codeOf(gerrs[0])
	default:
		kind = problem.Classify(err).Kind
		if kind == apperr.Invalid {
			return http.StatusBadRequest
		}
	}
	if httpLevel[kind] {
		return problem.Status(kind)
	}
	if media == mediaGraphQLResponse {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// codeOf is the kind of a GraphQL error: its apperr kind, or its
// extensions.code.
func codeOf(e *gqlerror.Error) apperr.Kind {
	if es := apperr.Errors(e.Err); len(es) > 0 {
		return es[0].Kind
	}
	switch code := e.Extensions["code"].(type) {
	case apperr.Kind:
		return code
	case string:
		return apperr.Kind(code)
	}
	return apperr.Invalid
}

// problemOf is the apperr error a GraphQL error stands for: the one it
// wraps, or one of the kind of its extensions.code.
func problemOf(e *gqlerror.Error) *apperr.Error {
	if es := apperr.Errors(e.Err); len(es) > 0 {
		return es[0]
	}
	return apperr.E(codeOf(e), "%s", e.Message)
}

// asGraphQLError presents a transport error as a GraphQL error; an
// internal one is shown generically.
func asGraphQLError(err error) *gqlerror.Error {
	ae := problem.Classify(err)
	if ae.Kind == apperr.Internal {
		ae = apperr.E(apperr.Internal, "internal server error")
	}
	return &gqlerror.Error{Message: ae.Render(graph.FieldName), Extensions: map[string]any{"code": ae.Kind}}
}

// failure is the answer to a request that did not execute: errors, and no
// data entry at all.
type failure struct {
	Errors     gqlerror.List  `json:"errors"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// writeFailure answers a request that did not execute with status and the
// errors of resp, each with the request's id. A 401 carries
// WWW-Authenticate, as on REST.
func writeFailure(w http.ResponseWriter, r *http.Request, media string, status int, resp *graphql.Response) {
	if err := chargeFailure(r.Context()); err != nil {
		status, resp = failureStatus(media, err), &graphql.Response{Errors: gqlerror.List{asGraphQLError(err)}}
	}
	if len(resp.Errors) > 0 {
		problem.Headers(w, r, problemOf(resp.Errors[0]))
	}
	for _, e := range resp.Errors {
		tagRequest(r.Context(), e)
	}
	w.Header().Set("Content-Type", media)
	writeJSONBody(w, status, failure{Errors: resp.Errors, Extensions: resp.Extensions})
}

// writeErrors answers err as a GraphQL request that did not execute, for
// refusals made before the executor (body size, tokens).
func writeErrors(w http.ResponseWriter, r *http.Request, err error) {
	media := answerMedia(r)
	if problem.Classify(err).Kind == apperr.TooLarge {
		w.Header().Set("Connection", "close")
	}
	writeFailure(w, r, media, failureStatus(media, err), &graphql.Response{Errors: gqlerror.List{asGraphQLError(err)}})
}

// writeResponse writes the answer of an executed operation. Its data is
// JSON the executor wrote (gqlgen's marshalers and graph/fast), compact
// already, so it is copied as it is: encoding/json would scan all of it
// again to compact and HTML-escape it, which took a tenth of the CPU of a
// page of materials. Strings in data keep <, > and & as they are, as REST's
// answers do; the answer is for JSON parsers, never for HTML. The rest of
// the answer (errors, extensions) is small and goes through
// encoding/json, in the field order of graphql.Response.
//
// A query sent with GET that answers without errors is a read its client
// may revalidate (internal/httpcache: an ETag of the answer, 304 to a
// matching If-None-Match); its media type follows Accept, hence
// Vary: Accept. An answer with errors (an outage's included) stays
// no-store: it says nothing a client should keep.
func writeResponse(w http.ResponseWriter, r *http.Request, resp *graphql.Response) {
	if resp == nil {
		// gqlgen's answer to a request whose context ended before it ran:
		// a bare null, with no length declared, which Outage replaces by
		// the UNAVAILABLE error it is.
		w.Write([]byte("null"))
		return
	}
	if resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
		writeJSONBody(w, http.StatusOK, resp)
		return
	}
	var errs, ext []byte
	var err error
	if len(resp.Errors) > 0 {
		if errs, err = json.Marshal(resp.Errors); err != nil {
			writeJSONBody(w, http.StatusOK, resp)
			return
		}
	}
	if len(resp.Extensions) > 0 {
		if ext, err = json.Marshal(resp.Extensions); err != nil {
			writeJSONBody(w, http.StatusOK, resp)
			return
		}
	}
	b := bufpool.Get()
	if errs != nil {
		b = append(b, `{"errors":`...)
		b = append(b, errs...)
		b = append(b, `,"data":`...)
	} else {
		b = append(b, `{"data":`...)
	}
	if len(resp.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, resp.Data...)
	}
	if ext != nil {
		b = append(b, `,"extensions":`...)
		b = append(b, ext...)
	}
	b = append(b, '}')
	if errs == nil && httpcache.Cacheable(r, http.StatusOK) {
		w.Header().Add("Vary", "Accept")
		httpcache.Write(w, r, b)
	} else {
		writeBytes(w, http.StatusOK, b)
	}
	bufpool.Put(b)
}

// writeJSONBody answers v encoded by encoding/json, with status.
func writeJSONBody(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"errors":[{"message":"internal server error","extensions":{"code":"INTERNAL"}}]}`)
	}
	writeBytes(w, status, b)
}

// writeBytes writes a whole answer with status in one call, its length
// declared: a chunked answer costs the connection a write (and the client
// a read) of its own for the closing chunk, and several small writes
// reach the socket as several segments.
func writeBytes(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// multipartTransport is gqlgen's multipart request transport (uploads)
// with the statuses of httpTransport for requests that fail before they
// execute.
type multipartTransport struct{ transport.MultipartForm }

// Do runs one multipart request.
func (m multipartTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	pe := &preExecution{GraphExecutor: exec}
	m.MultipartForm.Do(&statusWriter{ResponseWriter: w, r: r, pe: pe, media: answerMedia(r)}, r, pe)
}

// preExecution remembers the errors that stopped a request before it
// executed.
type preExecution struct {
	graphql.GraphExecutor
	errs gqlerror.List
}

// CreateOperationContext notes the errors of the wrapped executor's.
func (p *preExecution) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	rc, errs := p.GraphExecutor.CreateOperationContext(ctx, params)
	p.errs = errs
	return rc, errs
}

// statusWriter replaces the status gqlgen chose for a request that failed
// before it executed by failureStatus's, and its answer by a RateLimited
// one when the request is over budget (chargeFailure).
type statusWriter struct {
	http.ResponseWriter
	r       *http.Request
	pe      *preExecution
	media   string
	refused bool
}

// WriteHeader writes the status.
func (s *statusWriter) WriteHeader(status int) {
	if err := chargeFailure(s.r.Context()); err != nil {
		s.refused = true
		writeFailure(s.ResponseWriter, s.r, s.media, failureStatus(s.media, err), &graphql.Response{Errors: gqlerror.List{asGraphQLError(err)}})
		return
	}
	if len(s.pe.errs) > 0 {
		status = failureStatus(s.media, s.pe.errs)
		problem.Headers(s.ResponseWriter, s.r, problemOf(s.pe.errs[0]))
	}
	s.ResponseWriter.WriteHeader(status)
}

// Write writes the answer, unless a RateLimited one replaced it.
func (s *statusWriter) Write(p []byte) (int, error) {
	if s.refused {
		return len(p), nil
	}
	return s.ResponseWriter.Write(p)
}
