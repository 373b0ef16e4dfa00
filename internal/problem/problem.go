// Package problem turns errors into HTTP answers, once for every part of
// the service: Classify maps any error to its client-safe kind and
// message, Status maps a kind to its HTTP status (the one table), Headers
// sets the headers a status carries (Retry-After, WWW-Authenticate), and
// Write answers application/problem+json (RFC 9457). REST, the GraphQL
// endpoint (which writes GraphQL bodies but takes its statuses and headers
// from here), authentication, the rate limiter and file serving all answer
// through it, so that an error kind means the same status and headers
// everywhere.
package problem

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/bufpool"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/httpcache"
	"github.com/configurator/catalogue/internal/requestid"
)

// Classify maps any error to an *apperr.Error: the kinds the service
// chose, ent's not-found, validation and constraint errors, and policy
// denials. Anything else is Internal with a generic message, so internals
// never reach a client. List gives every error of a request that had
// several.
func Classify(err error) *apperr.Error {
	return List(err)[0]
}

// List classifies err into the client-safe errors it holds: each item of
// an apperr.List, or the one error Classify describes.
func List(err error) []*apperr.Error {
	if es := apperr.Errors(err); len(es) > 0 {
		return es
	}
	var ve *ent.ValidationError
	switch {
	case ent.IsNotFound(err):
		return []*apperr.Error{apperr.E(apperr.NotFound, "not found")}
	case errors.As(err, &ve):
		return []*apperr.Error{apperr.Field(ve.Name, "{} is invalid: %v", cause(ve))}
	case ent.IsConstraintError(err):
		return []*apperr.Error{apperr.E(apperr.Conflict, "the change conflicts with existing data")}
	case errors.Is(err, privacy.Deny):
		return []*apperr.Error{apperr.E(apperr.Forbidden, "not allowed")}
	case errors.Is(err, context.Canceled):
		return []*apperr.Error{apperr.E(apperr.Canceled, "the client closed the request")}
	case database.Deadline(err):
		return []*apperr.Error{apperr.E(apperr.Unavailable, "the request did not finish within its deadline; retry later")}
	case database.Unavailable(err):
		return []*apperr.Error{apperr.E(apperr.Unavailable, "the database is unavailable; retry later")}
	}
	return []*apperr.Error{apperr.E(apperr.Internal, InternalMessage)}
}

// InternalMessage is all a client learns of an internal error.
const InternalMessage = "internal server error"

// cause is the innermost error of err: the validator's own message rather
// than ent's wrapping, which names Go types.
func cause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// StatusClientClosed is the status of a request its client abandoned
// (nginx's 499); it shows in logs and metrics, never to the client.
const StatusClientClosed = 499

// statusOf is the one table from error kind to HTTP status.
var statusOf = map[apperr.Kind]int{
	apperr.Invalid:                 http.StatusBadRequest,
	apperr.Unauthenticated:         http.StatusUnauthorized,
	apperr.Forbidden:               http.StatusForbidden,
	apperr.NotFound:                http.StatusNotFound,
	apperr.Conflict:                http.StatusConflict,
	apperr.TooLarge:                http.StatusRequestEntityTooLarge,
	apperr.Unsupported:             http.StatusUnsupportedMediaType,
	apperr.NotAcceptable:           http.StatusNotAcceptable,
	apperr.MethodNotAllowed:        http.StatusMethodNotAllowed,
	apperr.SubscriptionNeedsStream: http.StatusBadRequest,
	apperr.TooComplex:              http.StatusBadRequest,
	apperr.TrustedOnly:             http.StatusBadRequest,
	apperr.RateLimited:             http.StatusTooManyRequests,
	apperr.SubscriptionLimit:       http.StatusTooManyRequests,
	apperr.KeyReused:               http.StatusUnprocessableEntity,
	apperr.Unavailable:             http.StatusServiceUnavailable,
	apperr.Canceled:                StatusClientClosed,
	apperr.Internal:                http.StatusInternalServerError,
}

// Status is the HTTP status of an error kind; an unknown kind is 500.
func Status(k apperr.Kind) int {
	return cmp.Or(statusOf[k], http.StatusInternalServerError)
}

// Headers sets the headers the answer to e carries: WWW-Authenticate on
// a 401, as RFC 6750 asks (a bare Bearer challenge when no credentials
// were sent, invalid_token when they were refused, with the description
// "token expired" when that is why), and Retry-After on a
// 429 or 503 (e's own wait, or apperr.RetryAfter).
func Headers(w http.ResponseWriter, r *http.Request, e *apperr.Error) {
	switch e.Kind {
	case apperr.Unauthenticated:
		if r == nil || r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", "Bearer")
		} else if e.Error() == apperr.ErrTokenExpired.Error() {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="token expired"`)
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		}
	case apperr.RateLimited, apperr.Unavailable:
		after := apperr.RetryAfter
		if e.Wait > 0 {
			after = strconv.Itoa(max(1, int(math.Ceil(e.Wait.Seconds()))))
		}
		w.Header().Set("Retry-After", after)
	}
}

// Log records err as its kind deserves, before it is answered: an
// internal error at error level (it is a bug), an unavailable one as a
// warning, and nothing for the client's own faults. what names the
// request ("rest request", "graphql request").
func Log(r *http.Request, what string, err error, kind apperr.Kind) {
	switch kind {
	case apperr.Internal:
		slog.ErrorContext(r.Context(), what+" failed", "method", r.Method, "path", r.URL.Path, "err", err)
	case apperr.Unavailable:
		slog.WarnContext(r.Context(), what+" unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
	}
}

// Failure is an error as a client is shown it, with every field at fault
// spelled by the transport's naming.
type Failure struct {
	Status  int
	Kind    apperr.Kind
	Message string
	Fields  []FieldError
	// First is the first classified error, for Headers.
	First *apperr.Error
}

// FieldError names one input at fault, in the transport's spelling.
type FieldError struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Of classifies err for a client whose transport spells domain names
// with name, logging it (Log) on the way: an internal error becomes the
// generic 500, several faults one message that lists them.
func Of(r *http.Request, err error, name func(string) string) Failure {
	problems := List(err)
	first := problems[0]
	status := Status(first.Kind)
	Log(r, "request", err, first.Kind)
	if status == http.StatusInternalServerError {
		ie := apperr.E(apperr.Internal, InternalMessage)
		return Failure{Status: status, Kind: apperr.Internal, Message: InternalMessage, First: ie}
	}
	f := Failure{Status: status, Kind: first.Kind, First: first}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.Render(name)
		if p.Field != "" {
			f.Fields = append(f.Fields, FieldError{Name: apperr.SpellPath(p.Field, name), Reason: msgs[i]})
		}
	}
	f.Message = msgs[0]
	if len(msgs) > 1 {
		f.Message = fmt.Sprintf("%d parameters are invalid: %s", len(msgs), strings.Join(msgs, "; "))
	}
	return f
}

// Body is an RFC 9457 problem detail, with the error kind as code and,
// for bad input, the fields at fault.
type Body struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Code   apperr.Kind  `json:"code"`
	Errors []FieldError `json:"errors,omitempty"`
	// Instance names the request, urn:request:ID with the id of its
	// X-Request-Id (requestid.Instance).
	Instance string `json:"instance,omitempty"`
}

// Write answers err as application/problem+json with the status and
// headers of its kind; fields are named in the domain's spelling (REST
// v1's).
func Write(w http.ResponseWriter, r *http.Request, err error) {
	f := Of(r, err, apperr.Domain)
	Headers(w, r, f.First)
	WriteBody(w, r, f.Status, "application/problem+json", Body{
		Type: "about:blank", Title: http.StatusText(f.Status), Status: f.Status, Detail: f.Message,
		Code: f.Kind, Errors: f.Fields, Instance: requestid.Instance(r.Context()),
	})
}

// WriteStatus answers a problem that no error kind describes, such as a
// 405, as application/problem+json.
func WriteStatus(w http.ResponseWriter, r *http.Request, status int, code apperr.Kind, detail string) {
	WriteBody(w, r, status, "application/problem+json", Body{
		Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Code: code,
		Instance: requestid.Instance(r.Context()),
	})
}

// WriteBody answers v encoded by encoding/json, encoded before anything
// is written so that an encoding failure is a clean 500 rather than a
// cut-off body (WriteJSON says which headers it gets). HTML escaping is
// off: the body is never HTML.
func WriteBody(w http.ResponseWriter, r *http.Request, status int, contentType string, v any) {
	buf := bytes.NewBuffer(bufpool.Get())
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		slog.Error("encode answer", "err", err)
		status, contentType = http.StatusInternalServerError, "application/problem+json"
		buf.Reset()
		json.NewEncoder(buf).Encode(Body{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: InternalMessage, Code: apperr.Internal})
	}
	WriteJSON(w, r, status, contentType, buf.Bytes())
	bufpool.Put(buf.Bytes())
}

// noStore is the Cache-Control of an answer no one may keep, one slice
// for every answer (a header value is only ever replaced, never written
// into), which saves the allocation of Header.Set.
var noStore = []string{"no-store"}

// WriteJSON writes body, a whole JSON answer, with status and contentType:
// every JSON answer of the service goes out here. It goes out in one
// write with its length declared: a chunked answer costs the connection a
// write (and the client a read) of its own for the closing chunk, and
// several small writes reach the socket as several segments. A 200 to a
// GET of r is a read its client may revalidate (internal/httpcache: an
// ETag, Cache-Control: private, no-cache, and 304 to a matching
// If-None-Match); any other answer to r is no-store. With a nil r the
// answer gets neither: its caller owns its Cache-Control (the probes have
// none; a GraphQL answer with errors keeps the endpoint's no-store).
func WriteJSON(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	if r != nil {
		if httpcache.Cacheable(r, status) {
			httpcache.Write(w, r, body)
			return
		}
		h["Cache-Control"] = noStore
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
