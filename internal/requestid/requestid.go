// Package requestid gives every HTTP request an id that the client, the
// logs, the traces and the error bodies share, so that one failed request
// can be found in each of them.
//
// An incoming X-Request-Id is kept when it is well-formed (Valid): a
// load balancer or a client that already names its requests keeps its
// name end to end. Otherwise the service makes one (32 lower-case hex
// digits, 128 random bits). Either way the id is echoed in the response's
// X-Request-Id header and kept in the request's context (FromContext).
package requestid

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"net/http"
)

// Header is the request and response header that carries the id.
const Header = "X-Request-Id"

// MaxLen is the longest id kept; a longer one is replaced.
const MaxLen = 128

// URNPrefix starts the problem+json instance of an error (Instance).
const URNPrefix = "urn:request:"

// safe marks the bytes an id may hold: ASCII letters and digits and
// - . _ ~ : @ + = /. They cover UUIDs, hex and base64 ids, ULIDs and the
// ids of common proxies, and are legal in a URN (Instance) and in a
// header; spaces, quotes, commas, semicolons, %, non-ASCII and control
// bytes, which could forge or break a log line or a header, are not among
// them.
var safe = func() (t [256]bool) {
	for _, c := range "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-._~:@+=/" {
		t[c] = true
	}
	return t
}()

// Valid reports whether id is kept when a client sends it: 1 to MaxLen
// bytes, each an ASCII letter, a digit or one of - . _ ~ : @ + = /.
func Valid(id string) bool {
	if len(id) == 0 || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !safe[id[i]] {
			return false
		}
	}
	return true
}

// New makes an id: 128 bits from the runtime's per-thread ChaCha8
// generator (seeded by the OS), as 32 hex digits. Ids must be unique,
// not secret, and this costs a few nanoseconds where crypto/rand would
// cost a system call on some kernels.
func New() string {
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, 16), rand.Uint64())
	return hex.EncodeToString(binary.LittleEndian.AppendUint64(b, rand.Uint64()))
}

type key struct{}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// FromContext returns the id of the request ctx belongs to, or "" outside
// a request (a background job, a test calling a handler directly). It is
// the hook the error writers of both transports read.
func FromContext(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}

// Instance is the RFC 9457 instance member of a problem about the request
// of ctx: urn:request:ID, or "" (and then omitted) without an id.
func Instance(ctx context.Context) string {
	if id := FromContext(ctx); id != "" {
		return URNPrefix + id
	}
	return ""
}

// Middleware keeps a well-formed incoming X-Request-Id or makes one,
// echoes it in the response header before the handler runs (so every
// answer has it, errors and panics included), and puts it in the
// request's context. Each of also (such as metrics.NewContext) adds to
// that context too, so that the request is copied once for all of them.
func Middleware(also ...func(context.Context) context.Context) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get(Header)
			if !Valid(id) {
				id = New()
			}
			w.Header()[Header] = []string{id}
			ctx := NewContext(r.Context(), id)
			for _, f := range also {
				ctx = f(ctx)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}
