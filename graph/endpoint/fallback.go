package endpoint

import (
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/configurator/catalogue/internal/apperr"
)

// fallbackTransport answers the requests no transport serves, as JSON
// with extensions.code and requestId like every other error of the
// endpoint (gqlgen's own fallback is a text/plain 400): an upgrade other
// than WebSocket is 400, a body of another media type 415.
type fallbackTransport struct{}

// Supports takes every request: it is registered last.
func (fallbackTransport) Supports(*http.Request) bool { return true }

// Do answers the refusal.
func (fallbackTransport) Do(w http.ResponseWriter, r *http.Request, _ graphql.GraphExecutor) {
	if up := r.Header.Get("Upgrade"); up != "" {
		writeErrors(w, r, apperr.E(apperr.Invalid, "an upgrade to %q is not served: subscriptions use a WebSocket (graphql-transport-ws) or Server-Sent Events (POST with Accept: text/event-stream)", up))
		return
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		ct = "(none)"
	}
	writeErrors(w, r, apperr.E(apperr.Unsupported, "Content-Type %s is not supported: send application/json, or multipart/form-data for uploads", ct))
}

// acceptable reports whether the Accept header of r admits a JSON answer
// (application/json or application/graphql-response+json, or a wildcard
// that covers them); no Accept admits anything.
func acceptable(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["q"] == "0" {
			continue
		}
		switch mt {
		case mediaJSON, mediaGraphQLResponse, "*/*", "application/*":
			return true
		}
	}
	return false
}

// notAcceptable answers 406 to a request whose Accept admits no answer
// the endpoint gives, in application/json whatever it asked for.
func notAcceptable(w http.ResponseWriter, r *http.Request) {
	msg := "Accept %q admits no answer of this endpoint: accept application/json or application/graphql-response+json"
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		msg += "; Server-Sent Events are served to POST requests with a JSON body"
	}
	writeFailure(w, r, mediaJSON, http.StatusNotAcceptable, &graphql.Response{Errors: []*gqlerror.Error{asGraphQLError(apperr.E(apperr.NotAcceptable, msg, r.Header.Get("Accept")))}})
}
