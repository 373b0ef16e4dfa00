// Package apperr defines the error kinds both transports understand, so a
// resolver says what went wrong once and REST and GraphQL each map it to
// their own status or code.
package apperr

import (
	"errors"
	"fmt"
)

// Kind classifies an error for clients.
type Kind string

// The kinds, named as GraphQL extensions.code values.
const (
	Invalid         Kind = "BAD_REQUEST"
	Unauthenticated Kind = "UNAUTHENTICATED"
	Forbidden       Kind = "FORBIDDEN"
	NotFound        Kind = "NOT_FOUND"
	Conflict        Kind = "CONFLICT"
	// TooLarge is an upload or body over its size limit (HTTP 413).
	TooLarge Kind = "PAYLOAD_TOO_LARGE"
	// Unsupported is a body of a media type the operation does not take
	// (HTTP 415).
	Unsupported Kind = "UNSUPPORTED_MEDIA_TYPE"
	Internal    Kind = "INTERNAL"
)

// Error is an error with a kind and a message that is safe to show a client.
type Error struct {
	Kind    Kind
	Message string
	// Field names the input at fault, when there is one.
	Field string
}

func (e *Error) Error() string { return e.Message }

// E returns an error of kind k with a client-safe message.
func E(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Field returns an Invalid error naming the input field at fault.
func Field(field, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrNoToken is the answer to a request that needs a caller and has none.
var ErrNoToken = E(Unauthenticated, "authentication required: send Authorization: Bearer <token>")

// KindOf returns the kind of the first *Error in err's chain, or Internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}
