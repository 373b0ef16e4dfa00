package auth

import (
	"context"
	"net/http"
	"strings"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// credentialKey holds the JWT a context's viewer was resolved from.
type credentialKey struct{}

// Authenticate resolves token (Resolve) and returns ctx carrying its
// viewer and the token itself, which a stream started under ctx keeps
// checking as HTTP checks it (Watch, Check). Errors are Resolve's.
func (t *Tokens) Authenticate(ctx context.Context, token string) (context.Context, error) {
	v, err := t.Resolve(ctx, token)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(viewer.NewContext(ctx, v), credentialKey{}, token), nil
}

// credentialOf is the JWT Authenticate put in ctx, or "".
func credentialOf(ctx context.Context) string {
	s, _ := ctx.Value(credentialKey{}).(string)
	return s
}

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
			ctx, err := t.Authenticate(r.Context(), token)
			if err != nil {
				reject(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}
