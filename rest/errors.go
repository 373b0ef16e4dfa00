package rest

import (
	"net/http"

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

// writeBody answers v through problem.WriteJSON (a declared length; a
// revalidatable read or no-store). The v1 shapes with an appender
// (encode.go) skip encoding/json's reflection; the others, and a value an
// appender refuses (NaN, which encoding/json refuses too, hence a clean
// 500), go through problem.WriteBody.
func writeBody(w http.ResponseWriter, r *http.Request, status int, contentType string, v any) {
	a := fastShape(v)
	if a == nil {
		problem.WriteBody(w, r, status, contentType, v)
		return
	}
	buf, ok := a.appendJSON(bufpool.Get())
	if ok {
		buf = append(buf, '\n')
		problem.WriteJSON(w, r, status, contentType, buf)
	} else {
		problem.WriteBody(w, r, status, contentType, v)
	}
	bufpool.Put(buf)
}
