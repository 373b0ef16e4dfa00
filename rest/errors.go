package rest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/bufpool"
	"github.com/configurator/catalogue/internal/httpcache"
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
	writeJSON(w, r, f.Status, presentEnvelope(false, f.Message, nil))
}

// writeJSON answers v as application/json with status.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	writeBody(w, r, status, "application/json", v)
}

// writeBody encodes v before writing anything, so that an encoding
// failure is a clean 500 rather than a cut-off body. The length is
// declared: a chunked answer costs the connection a write (and the client
// a read) of its own for the closing chunk. A 200 to a GET is a read its
// client may revalidate (an ETag, Cache-Control: private, no-cache, and
// 304 to a matching If-None-Match: internal/httpcache); anything else is
// no-store.
func writeBody(w http.ResponseWriter, r *http.Request, status int, contentType string, v any) {
	buf, err := encodeBody(bufpool.Get(), v)
	defer func() { bufpool.Put(buf) }()
	if err != nil {
		slog.Error("rest: encode response", "err", err)
		problem.WriteBody(w, http.StatusInternalServerError, "application/problem+json", problem.Body{
			Type: "about:blank", Title: http.StatusText(http.StatusInternalServerError), Status: http.StatusInternalServerError,
			Detail: problem.InternalMessage, Code: apperr.Internal,
		})
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	if httpcache.Cacheable(r, status) {
		httpcache.Write(w, r, buf)
		return
	}
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(buf)))
	w.WriteHeader(status)
	w.Write(buf)
}

// encodeBody appends the JSON of v and a newline to b. The v1 shapes with
// an appender (encode.go) skip encoding/json's reflection; the others go
// through encoding/json. URLs stay readable (no HTML escaping: the body is
// never HTML).
func encodeBody(b []byte, v any) ([]byte, error) {
	if a := fastShape(v); a != nil {
		b, ok := a.appendJSON(b)
		if !ok {
			return b, &json.UnsupportedValueError{Str: "NaN or infinite number"}
		}
		return append(b, '\n'), nil
	}
	out := bytes.NewBuffer(b)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return out.Bytes(), err
}
