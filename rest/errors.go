package rest

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/bufpool"
	"github.com/configurator/catalogue/internal/problem"
)

// writeProblem answers err as application/problem+json with the status
// and headers of its kind (internal/problem, the service's one table).
// REST v1 names its fields as the domain does (snake_case, per_page,
// configurator_id), so a domain name is its own REST spelling.
func writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	problem.Write(w, r, err)
}

// writeStatusProblem answers a problem that no error kind describes, such
// as 405.
func writeStatusProblem(w http.ResponseWriter, r *http.Request, status int, code apperr.Kind, detail string) {
	problem.WriteStatus(w, r, status, code, detail)
}

// writeEnvelopeError answers err in the spec's {success, message, data}
// envelope, used by the option-set and override endpoints, with the same
// status and headers as writeProblem would choose.
func writeEnvelopeError(w http.ResponseWriter, r *http.Request, err error) {
	f := problem.Of(r, err, apperr.Domain)
	problem.Headers(w, r, f.First)
	writeJSON(w, f.Status, presentEnvelope(false, f.Message, nil))
}

// writeJSON answers v as application/json with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeBody(w, status, "application/json", v)
}

// writeBody encodes v before writing anything, so that an encoding
// failure is a clean 500 rather than a cut-off body. The v1 shapes with
// an appender (encode.go) skip encoding/json's reflection; URLs stay
// readable (no HTML escaping: the body is never HTML). The length is
// declared: a chunked answer costs the connection a write (and the client
// a read) of its own for the closing chunk.
func writeBody(w http.ResponseWriter, status int, contentType string, v any) {
	a := fastShape(v)
	if a == nil {
		problem.WriteBody(w, status, contentType, v)
		return
	}
	buf := bufpool.Get()
	defer func() { bufpool.Put(buf) }()
	b, ok := a.appendJSON(buf)
	if !ok {
		slog.Error("rest: encode response", "err", &json.UnsupportedValueError{Str: "NaN or infinite number"})
		problem.WriteBody(w, http.StatusInternalServerError, "application/problem+json", problem.Body{
			Type: "about:blank", Title: http.StatusText(http.StatusInternalServerError), Status: http.StatusInternalServerError,
			Detail: problem.InternalMessage, Code: apperr.Internal,
		})
		return
	}
	buf = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(buf)))
	w.WriteHeader(status)
	w.Write(buf)
}
