package main

import (
	"context"
	"net/http"
	"time"
)

// deadline gives every request a deadline d after it starts (d <= 0: none).
// Database work stops when it passes (PostgreSQL statements are cancelled,
// waits for a connection end), and the transports answer 503 with
// Retry-After, so that a request never hangs on a sick database longer
// than d. The server's write timeout, a little longer, cuts off a handler
// that would ignore it.
func deadline(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if d <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}
