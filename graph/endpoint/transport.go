package endpoint

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/bufpool"
	"github.com/configurator/catalogue/internal/httpcache"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/valid"
)

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
		raw, err := readBody(r)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, valid.TooLarge(mbe.Limit)
		} else if err != nil {
			return nil, apperr.E(apperr.Invalid, "the request body cannot be read")
		}
		if name, ok := overlong(raw, MaxStringBytes); ok {
			return nil, apperr.E(apperr.Invalid, "the request carries a string longer than %d bytes (the value of %q); no query or variable is so long", MaxStringBytes, name)
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

// readBody reads r's body into one buffer of its declared length (which
// limitBody bounded), so that a large body is not copied again each time
// a growing buffer doubles.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 || r.ContentLength > valid.MaxJSONBody {
		return io.ReadAll(r.Body)
	}
	buf := make([]byte, r.ContentLength)
	_, err := io.ReadFull(r.Body, buf) // the server reads no more than the declared length
	return buf, err
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

// httpLevel are the kinds whose HTTP status (problem.Status) a request
// that failed before it executed gets whatever the media type: the
// request is refused at the HTTP level rather than as a GraphQL document.
var httpLevel = map[apperr.Kind]bool{
	apperr.Unauthenticated:         true,
	apperr.TooLarge:                true,
	apperr.Unsupported:             true,
	apperr.NotAcceptable:           true,
	apperr.MethodNotAllowed:        true,
	apperr.SubscriptionNeedsStream: true,
	apperr.RateLimited:             true,
	apperr.Unavailable:             true,
	apperr.Internal:                true,
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
	writeJSON(w, status, media, failure{Errors: resp.Errors, Extensions: resp.Extensions})
}

// writeErrors answers err as a GraphQL request that did not execute, for
// refusals made before the executor (body size, tokens).
func writeErrors(w http.ResponseWriter, r *http.Request, err error) {
	media := cmp.Or(negotiate(r.Header.Get("Accept")).media, mediaJSON)
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
func writeResponse(w http.ResponseWriter, r *http.Request, media string, resp *graphql.Response) {
	if resp == nil {
		// gqlgen's answer to a request whose context ended before it ran
		// (its deadline passed while the body was read): the UNAVAILABLE
		// error it is, which Outage makes a 503. A client that left gets
		// gqlgen's bare null.
		err := r.Context().Err()
		if !errors.Is(err, context.DeadlineExceeded) {
			w.Header().Set("Content-Type", media)
			w.Write([]byte("null"))
			return
		}
		noteOutage(r.Context())
		gerr := asGraphQLError(err)
		tagRequest(r.Context(), gerr)
		resp = &graphql.Response{Errors: gqlerror.List{gerr}}
	}
	if resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
		writeJSON(w, http.StatusOK, media, resp)
		return
	}
	var errs, ext []byte
	var err error
	if len(resp.Errors) > 0 {
		errs, err = json.Marshal(resp.Errors)
	}
	if len(resp.Extensions) > 0 && err == nil {
		ext, err = json.Marshal(resp.Extensions)
	}
	if err != nil {
		writeJSON(w, http.StatusOK, media, resp)
		return
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
	if errs != nil {
		// An answer with errors keeps the endpoint's no-store.
		r = nil
	} else if httpcache.Cacheable(r, http.StatusOK) {
		w.Header().Add("Vary", "Accept")
	}
	problem.WriteJSON(w, r, http.StatusOK, media, b)
	bufpool.Put(b)
}

// writeJSON answers v encoded by encoding/json, with status and media;
// the endpoint's no-store stands.
func writeJSON(w http.ResponseWriter, status int, media string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"errors":[{"message":"internal server error","extensions":{"code":"INTERNAL"}}]}`)
	}
	problem.WriteJSON(w, nil, status, media, b)
}

// MaxStringBytes bounds every string of a GraphQL JSON request: twice
// the longest a request may carry, the query (MaxDocumentBytes) or a
// JSON object's text (valid.MaxJSONBytes), so that a string just over
// those is still refused by their own checks, which name them. A longer
// one (a cursor of a megabyte) is refused by overlong before the body is
// decoded, which would copy it twice.
const MaxStringBytes = 2 * max(MaxDocumentBytes, valid.MaxJSONBytes)

// overlong finds the first string of the JSON text raw whose decoded
// text is longer than limit bytes, and the member name before it ("" for
// none). It finds the strings with a byte search and decodes nothing; a
// string's decoded length is counted as its raw bytes less its escapes,
// each of which decodes to one byte at least, so that no string within
// limit is taken for one over it. Malformed JSON is left to the decoder.
// A text no longer than limit holds no such string, so the requests of
// every day (a few hundred bytes) are not scanned at all.
func overlong(raw []byte, limit int) (key string, found bool) {
	if len(raw) <= limit {
		return "", false
	}
	var last []byte // the last member name
	for i := 0; i < len(raw); {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			return "", false
		}
		start := i + q + 1
		end, n := start, 0
		for {
			j := bytes.IndexAny(raw[end:], "\"\\")
			if j < 0 {
				return "", false
			}
			n, end = n+j, end+j
			if raw[end] == '"' {
				break
			}
			if end+1 < len(raw) && raw[end+1] == 'u' {
				end += 6
			} else {
				end += 2
			}
			n++
			if end >= len(raw) {
				return "", false
			}
		}
		if n > limit {
			return clip(string(last)), true
		}
		if rest := bytes.TrimLeft(raw[end+1:], " \t\r\n"); len(rest) > 0 && rest[0] == ':' {
			last = raw[start:end]
		}
		i = end + 1
	}
	return "", false
}
