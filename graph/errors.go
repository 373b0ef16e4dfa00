package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/apperr"
)

// Classify maps any error a resolver returns to an *apperr.Error: the kinds
// resolvers chose, ent's not-found, validation and constraint errors, and
// policy denials. Anything else is Internal with a generic message, so
// internals never reach a client. Both transports present errors through it.
func Classify(err error) *apperr.Error {
	var ae *apperr.Error
	var ve *ent.ValidationError
	switch {
	case errors.As(err, &ae):
		return ae
	case ent.IsNotFound(err):
		return apperr.E(apperr.NotFound, "not found")
	case errors.As(err, &ve):
		return &apperr.Error{Kind: apperr.Invalid, Field: ve.Name, Message: fmt.Sprintf("%s is invalid: %v", ve.Name, cause(ve))}
	case ent.IsConstraintError(err):
		return apperr.E(apperr.Conflict, "the change conflicts with existing data")
	case errors.Is(err, privacy.Deny):
		return apperr.E(apperr.Forbidden, "not allowed")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apperr.E(apperr.Internal, "request cancelled")
	}
	return apperr.E(apperr.Internal, "internal server error")
}

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

// presentError gives every GraphQL error an extensions.code. Errors gqlgen
// raised itself (parsing, validation, coercion) keep their message.
func presentError(ctx context.Context, err error) *gqlerror.Error {
	gerr := graphql.DefaultErrorPresenter(ctx, err)
	if gerr.Err == nil {
		if gerr.Extensions == nil || gerr.Extensions["code"] == nil {
			setExt(gerr, "code", string(apperr.Invalid))
		}
		return gerr
	}
	ae := Classify(gerr.Err)
	if ae.Kind == apperr.Internal {
		slog.ErrorContext(ctx, "graphql resolver failed", "path", gerr.Path.String(), "err", gerr.Err)
	}
	gerr.Message = ae.Message
	setExt(gerr, "code", string(ae.Kind))
	if ae.Field != "" {
		setExt(gerr, "field", ae.Field)
	}
	return gerr
}

func setExt(e *gqlerror.Error, k string, v any) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions[k] = v
}

// recoverPanic logs a resolver panic and answers a generic internal error.
func recoverPanic(ctx context.Context, p any) error {
	slog.ErrorContext(ctx, "graphql resolver panicked", "panic", p)
	return apperr.E(apperr.Internal, "internal server error")
}

// RejectAuth answers a GraphQL request whose token was refused: a GraphQL
// error response with extensions.code UNAUTHENTICATED and status 401.
func RejectAuth(w http.ResponseWriter, r *http.Request, err error) {
	ae := Classify(err)
	status := http.StatusUnauthorized
	if ae.Kind != apperr.Unauthenticated {
		slog.ErrorContext(r.Context(), "authenticate", "err", err)
		status = http.StatusInternalServerError
	} else {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{
		"errors": []map[string]any{{"message": ae.Message, "extensions": map[string]any{"code": ae.Kind}}},
	})
}
