// Package apperr is the one error vocabulary below both transports: an
// error carries its kind, the input it is about (as a path in the domain's
// own names) and a client-safe message, so that a resolver says what went
// wrong once and REST and GraphQL each map the kind to their status or
// code and spell the field their own way.
package apperr

import (
	"errors"
	"fmt"
	"strings"
	"time"
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
	// NotAcceptable is an Accept header that no answer the server can give
	// satisfies (HTTP 406).
	NotAcceptable Kind = "NOT_ACCEPTABLE"
	// MethodNotAllowed is a request whose HTTP method the operation does
	// not take, such as a GraphQL mutation sent with GET (HTTP 405).
	MethodNotAllowed Kind = "METHOD_NOT_ALLOWED"
	// SubscriptionNeedsStream is a GraphQL subscription sent over a
	// request whose answer cannot stream its events (a plain POST or GET
	// accepting JSON only), refused at once rather than held open for a
	// first event (HTTP 400).
	SubscriptionNeedsStream Kind = "SUBSCRIPTION_NEEDS_STREAM"
	// KeyReused is an Idempotency-Key sent again with another request
	// (HTTP 422).
	KeyReused Kind = "IDEMPOTENCY_KEY_REUSED"
	// TooComplex is a GraphQL document over the limits of its cost, refused
	// before it runs (HTTP 400).
	TooComplex Kind = "QUERY_TOO_COMPLEX"
	// TrustedOnly is a GraphQL document sent as text to a server that
	// accepts only the trusted documents of its manifest (PERSISTED_ONLY),
	// refused before it runs (HTTP 400).
	TrustedOnly Kind = "PERSISTED_QUERY_ONLY"
	// RateLimited is a request over its token's budget (HTTP 429).
	RateLimited Kind = "RATE_LIMITED"
	// SubscriptionLimit is a subscription over a cap on open streams (of
	// one WebSocket, or of one caller on one server), refused before it
	// starts (HTTP 429).
	SubscriptionLimit Kind = "SUBSCRIPTION_LIMIT"
	// Unavailable is a dependency that is down or overloaded, such as the
	// database restarting: the request may be retried (HTTP 503).
	Unavailable Kind = "UNAVAILABLE"
	// Canceled is a request its client abandoned (it closed the
	// connection) before the answer was ready: nobody reads the answer, and
	// it is neither the client's fault nor the service's (HTTP 499, the
	// status proxies such as nginx log for it).
	Canceled Kind = "CLIENT_CLOSED_REQUEST"
	Internal Kind = "INTERNAL"
)

// RetryAfter is the Retry-After, in seconds, of an Unavailable answer
// that names no wait of its own (Error.Wait): the service reconnects to
// its database within a second or two of the database's return, so a
// client that waits this long between retries gets through soon after
// without hammering a recovering database.
const RetryAfter = "1"

// Error is an error with a kind and a message that is safe to show a
// client.
//
// The message is a template written in the domain's names: {name}
// placeholders (a lower-case snake_case name, such as {per_page}, perhaps
// with keys and indexes after it, such as {configurator_print_map[2]})
// stand for input fields and are spelled by each transport (per_page on REST,
// perPage on GraphQL) when it renders the error. Client text only ever
// enters as an argument of the template, after the placeholders are
// spelled, so nothing a client sent is ever rewritten.
type Error struct {
	Kind Kind
	// Field is the domain path of the input at fault, when there is one:
	// a domain field name (snake_case, as the data model names it, such as
	// configurator_id), optionally followed by keys (.12) and indexes ([0])
	// inside it as the client sent them. Transports spell only the leading
	// name.
	Field string
	// Wait, for RateLimited and Unavailable, is how long the client
	// should wait before it retries (the Retry-After of an HTTP answer);
	// zero means the kind's default.
	Wait time.Duration
	// format and args are the message template and its arguments.
	format string
	args   []any
}

// E returns an error of kind k with a client-safe message; format may name
// fields as {name} placeholders.
func E(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, format: format, args: args}
}

// Field returns an Invalid error about the input field path. The message
// names it as {} (and any other field as {name}), for example
// Field("page", "{} must be 1 or more, got %d", 0). A transport that learns
// the field only later (GraphQL scalars do not know their argument) may
// leave path empty and set Field before rendering.
func Field(path, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Field: path, format: format, args: args}
}

// At returns a copy of e about the input field path, for errors of
// another kind than Invalid that concern one input, such as a reference
// to a record that is not found.
func (e *Error) At(path string) *Error {
	c := *e
	c.Field = path
	return &c
}

// After returns a copy of e that tells the client to retry after d.
func (e *Error) After(d time.Duration) *Error {
	c := *e
	c.Wait = d
	return &c
}

// Render returns the message with every field placeholder spelled by name,
// the transport's mapping from domain names to its own; {} is the error's
// own Field.
func (e *Error) Render(name func(domain string) string) string {
	return fmt.Sprintf(spell(e.format, e.Field, name), e.args...)
}

// Error returns the message in the domain's spelling, for logs.
func (e *Error) Error() string { return e.Render(Domain) }

// Domain is the identity spelling: the domain's own names.
func Domain(name string) string { return name }

// spell replaces the {path} placeholders of format, and {} by self, with
// their spelling by name, doubling any % in it so that a spelled name is
// never read as a verb.
func spell(format, self string, name func(string) string) string {
	if !strings.Contains(format, "{") {
		return format
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(format, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(format[open:], '}')
		if end == 1 && self != "" {
			b.WriteString(format[:open])
			b.WriteString(strings.ReplaceAll(SpellPath(self, name), "%", "%%"))
			format = format[open+2:]
			continue
		}
		if end < 0 || !isPath(format[open+1:open+end]) {
			b.WriteString(format[:open+1])
			format = format[open+1:]
			continue
		}
		b.WriteString(format[:open])
		b.WriteString(strings.ReplaceAll(SpellPath(format[open+1:open+end], name), "%", "%%"))
		format = format[open+end+1:]
	}
	b.WriteString(format)
	return b.String()
}

// isPath reports whether s can be a placeholder: a domain field name
// (lower-case letters, digits and underscores, starting with a letter),
// optionally followed by plain keys and indexes (.12, [0]).
func isPath(s string) bool {
	return s != "" && s[0] >= 'a' && s[0] <= 'z' && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_.[]") == ""
}

// SpellPath spells the leading name of a domain path with name and keeps
// the keys and indexes after it as they are: they are the client's own.
func SpellPath(path string, name func(string) string) string {
	end := strings.IndexAny(path, ".[")
	if end < 0 {
		return name(path)
	}
	return name(path[:end]) + path[end:]
}

// List is several errors of one request, reported together so that a
// client learns of every fault at once.
type List []*Error

// Error joins the messages in the domain's spelling, for logs.
func (l List) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Err returns the list as an error, or nil when it is empty, so that a
// check can collect faults and return them in one statement.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Unwrap lets errors.As find the first error's kind.
func (l List) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// Errors returns the *Error values in err: the items of a List, or the one
// *Error in its chain, or nil.
func Errors(err error) []*Error {
	var l List
	if errors.As(err, &l) && len(l) > 0 {
		return l
	}
	var e *Error
	if errors.As(err, &e) {
		return []*Error{e}
	}
	return nil
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

// ErrTokenExpired is a token whose expiry has passed: the client should
// get a new one (log in again), which RFC 6750 tells it with the
// invalid_token challenge and this description (problem.Headers).
var ErrTokenExpired = E(Unauthenticated, "token expired")
