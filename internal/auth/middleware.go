package auth

import (
	"net/http"
	"strings"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// Reject writes the response for a request whose credentials were refused;
// each transport passes its own (GraphQL errors, problem+json).
type Reject func(w http.ResponseWriter, r *http.Request, err error)

// Middleware resolves `Authorization: Bearer <JWT>` and puts the viewer in
// the request context. A request without the header passes on anonymously
// (the tenancy rules then refuse any data access as unauthenticated); a
// malformed, invalid or revoked token is refused at once through reject.
func Middleware(t *Tokens, reject Reject) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := r.Header.Get("Authorization")
			if h == "" {
				next.ServeHTTP(w, r)
				return
			}
			scheme, token, ok := strings.Cut(h, " ")
			token = strings.TrimSpace(token)
			if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
				reject(w, r, apperr.E(apperr.Unauthenticated, "the Authorization header must be: Bearer <token>"))
				return
			}
			v, err := t.Resolve(r.Context(), token)
			if err != nil {
				reject(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(viewer.NewContext(r.Context(), v)))
		})
	}
}
