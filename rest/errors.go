package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"unicode"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/apperr"
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
	apperr.Internal:        http.StatusInternalServerError,
}

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

// failureOf classifies err through graph.Classify, the classification
// GraphQL uses, and rewrites the resolvers' GraphQL argument names
// (perPage) into the REST parameter names (per_page). Internal errors are
// logged and shown generically.
func failureOf(r *http.Request, err error) failure {
	var pe paramErrors
	if errors.As(err, &pe) && len(pe) > 0 {
		f := failure{status: http.StatusBadRequest, kind: apperr.Invalid, message: pe.Error()}
		for _, e := range pe {
			f.fields = append(f.fields, fieldError{Name: e.Field, Reason: e.Message})
		}
		return f
	}
	ae := graph.Classify(err)
	status, ok := statusOf[ae.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	if status == http.StatusInternalServerError {
		slog.ErrorContext(r.Context(), "rest request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		return failure{status: status, kind: apperr.Internal, message: internalMessage}
	}
	f := failure{status: status, kind: ae.Kind, message: restNames(ae.Message)}
	if ae.Field != "" {
		f.fields = []fieldError{{Name: snake(ae.Field), Reason: f.message}}
	}
	return f
}

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
	})
}

// writeStatusProblem answers a problem that no error kind describes, such
// as 405.
func writeStatusProblem(w http.ResponseWriter, status int, code apperr.Kind, detail string) {
	writeBody(w, status, "application/problem+json", problem{
		Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Code: code,
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
// no credentials were sent, invalid_token when they were refused.
func challenge(w http.ResponseWriter, r *http.Request, status int) {
	if status != http.StatusUnauthorized {
		return
	}
	if r.Header.Get("Authorization") == "" {
		w.Header().Set("WWW-Authenticate", "Bearer")
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
}

// writeJSON answers v as application/json with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeBody(w, status, "application/json", v)
}

// writeBody encodes v before writing anything, so that an encoding
// failure is a clean 500 rather than a cut-off body. URLs stay readable:
// HTML escaping is off, as the body is never HTML.
func writeBody(w http.ResponseWriter, status int, contentType string, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		slog.Error("rest: encode response", "err", err)
		status, contentType = http.StatusInternalServerError, "application/problem+json"
		buf.Reset()
		enc.Encode(problem{
			Type: "about:blank", Title: http.StatusText(status), Status: status,
			Detail: internalMessage, Code: apperr.Internal,
		})
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// camelWord matches a lowerCamelCase identifier, such as perPage.
var camelWord = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b`)

// restNames rewrites the GraphQL argument names in a resolver's message
// into REST parameter names: "perPage must be ..." becomes "per_page must
// be ...". Resolver messages hold no client text but numbers and dates, so
// every camelCase word in them is an argument name.
func restNames(msg string) string {
	return camelWord.ReplaceAllStringFunc(msg, snake)
}

// snake turns a camelCase name into snake_case: perPage is per_page,
// configuratorOptionId is configurator_option_id, configuratorID is
// configurator_id.
func snake(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, c := range rs {
		if unicode.IsUpper(c) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			nextLower := i > 0 && i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}
