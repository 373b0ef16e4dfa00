package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/bufpool"
	"github.com/configurator/catalogue/internal/requestid"
)

// statusOf is the one table from error kind to HTTP status.
var statusOf = map[apperr.Kind]int{
	apperr.Invalid:         http.StatusBadRequest,
	apperr.Unauthenticated: http.StatusUnauthorized,
	apperr.Forbidden:       http.StatusForbidden,
	apperr.NotFound:        http.StatusNotFound,
	apperr.Conflict:        http.StatusConflict,
	apperr.TooLarge:        http.StatusRequestEntityTooLarge,
	apperr.Unsupported:     http.StatusUnsupportedMediaType,
	apperr.TooComplex:      http.StatusBadRequest,
	apperr.RateLimited:     http.StatusTooManyRequests,
	apperr.KeyReused:       http.StatusUnprocessableEntity,
	apperr.Unavailable:     http.StatusServiceUnavailable,
	apperr.Canceled:        statusClientClosed,
	apperr.Internal:        http.StatusInternalServerError,
}

// statusClientClosed is the status of a request its client abandoned
// (nginx's 499); it shows in logs and metrics, never to the client.
const statusClientClosed = 499

// internalMessage is all a client learns of an internal error.
const internalMessage = "internal server error"

// problem is an RFC 9457 problem detail, with the error kind as code and,
// for bad input, the fields at fault.
type problem struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Code   apperr.Kind  `json:"code"`
	Errors []fieldError `json:"errors,omitempty"`
	// Instance names the request, urn:request:ID with the id of its
	// X-Request-Id (requestid.Instance).
	Instance string `json:"instance,omitempty"`
}

// fieldError names one input at fault, by its REST (snake_case) name.
type fieldError struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// failure is an error as a client is shown it.
type failure struct {
	status  int
	kind    apperr.Kind
	message string
	fields  []fieldError
}

// failureOf classifies err through graph.Problems, the classification
// GraphQL uses, and names the fields at fault in REST's spelling
// (restName). Internal errors are logged and shown generically.
func failureOf(r *http.Request, err error) failure {
	problems := graph.Problems(err)
	status, ok := statusOf[problems[0].Kind]
	if !ok || status == http.StatusInternalServerError {
		slog.ErrorContext(r.Context(), "rest request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		return failure{status: http.StatusInternalServerError, kind: apperr.Internal, message: internalMessage}
	}
	if status == http.StatusServiceUnavailable {
		slog.WarnContext(r.Context(), "rest request unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	f := failure{status: status, kind: problems[0].Kind}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.Render(restName)
		if p.Field != "" {
			f.fields = append(f.fields, fieldError{Name: apperr.SpellPath(p.Field, restName), Reason: msgs[i]})
		}
	}
	f.message = msgs[0]
	if len(msgs) > 1 {
		f.message = fmt.Sprintf("%d parameters are invalid: %s", len(msgs), strings.Join(msgs, "; "))
	}
	return f
}

// restName is REST's half of the naming mapping: v1 names its fields as
// the domain does (snake_case, per_page, configurator_id), so a domain
// name is its own REST spelling.
func restName(domain string) string { return domain }

// writeProblem answers err as application/problem+json with the status of
// its kind. A 401 carries WWW-Authenticate, as RFC 6750 asks.
func writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	f := failureOf(r, err)
	challenge(w, r, f.status)
	writeBody(w, f.status, "application/problem+json", problem{
		Type:   "about:blank",
		Title:  http.StatusText(f.status),
		Status: f.status,
		Detail: f.message,
		Code:   f.kind,
		Errors: f.fields,

		Instance: requestid.Instance(r.Context()),
	})
}

// writeStatusProblem answers a problem that no error kind describes, such
// as 405.
func writeStatusProblem(w http.ResponseWriter, r *http.Request, status int, code apperr.Kind, detail string) {
	writeBody(w, status, "application/problem+json", problem{
		Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Code: code,
		Instance: requestid.Instance(r.Context()),
	})
}

// writeEnvelopeError answers err in the spec's {success, message, data}
// envelope, used by the option-set and override endpoints, with the same
// status as writeProblem would choose.
func writeEnvelopeError(w http.ResponseWriter, r *http.Request, err error) {
	f := failureOf(r, err)
	challenge(w, r, f.status)
	writeJSON(w, f.status, presentEnvelope(false, f.message, nil))
}

// challenge sets WWW-Authenticate on a 401: a bare Bearer challenge when
// no credentials were sent, invalid_token when they were refused. A 503
// (the database is unavailable) says when to retry.
func challenge(w http.ResponseWriter, r *http.Request, status int) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", apperr.RetryAfter)
	}
	if status == http.StatusUnauthorized {
		auth.Challenge(w, r)
	}
}

// writeJSON answers v as application/json with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeBody(w, status, "application/json", v)
}

// writeBody encodes v before writing anything, so that an encoding
// failure is a clean 500 rather than a cut-off body. URLs stay readable:
// HTML escaping is off, as the body is never HTML. The length is declared:
// a chunked answer costs the connection a write (and the client a read)
// of its own for the closing chunk.
func writeBody(w http.ResponseWriter, status int, contentType string, v any) {
	buf := bytes.NewBuffer(bufpool.Get())
	defer func() { bufpool.Put(buf.Bytes()) }()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	var err error
	if a := fastShape(v); a != nil {
		b, ok := a.appendJSON(buf.Bytes())
		if !ok {
			err = &json.UnsupportedValueError{Str: "NaN or infinite number"}
		}
		buf = bytes.NewBuffer(append(b, '\n'))
	} else {
		err = enc.Encode(v)
	}
	if err != nil {
		slog.Error("rest: encode response", "err", err)
		status, contentType = http.StatusInternalServerError, "application/problem+json"
		buf.Reset()
		json.NewEncoder(buf).Encode(problem{
			Type: "about:blank", Title: http.StatusText(status), Status: status,
			Detail: internalMessage, Code: apperr.Internal,
		})
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
