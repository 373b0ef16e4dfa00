package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/problem"
)

// TestStatusTable checks that every error kind has its status.
func TestStatusTable(t *testing.T) {
	want := map[apperr.Kind]int{
		apperr.Invalid: 400, apperr.Unauthenticated: 401, apperr.Forbidden: 403, apperr.NotFound: 404,
		apperr.Conflict: 409, apperr.TooLarge: 413, apperr.Unsupported: 415, apperr.Internal: 500,
		apperr.TooComplex: 400, apperr.TrustedOnly: 400, apperr.RateLimited: 429,
		apperr.KeyReused: 422, apperr.Unavailable: 503, apperr.Canceled: 499,
	}
	for k, s := range want {
		if got := problem.Status(k); got != s {
			t.Errorf("problem.Status(%s) = %d; want %d", k, got, s)
		}
	}
}

// The messages of an outage.
const (
	unavailable = "the database is unavailable; retry later"
	late        = "the request did not finish within its deadline; retry later"
)

func TestWriteProblem(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		auth       string
		status     int
		code       apperr.Kind
		detail     string
		field      string
		challenge  string
		fieldCount int
		retryAfter string
	}{
		{
			name: "resolver field error", err: fmt.Errorf("list: %w", apperr.Field("per_page", "{} must be between 1 and 100, got 0")),
			status: 400, code: apperr.Invalid, detail: "per_page must be between 1 and 100, got 0", field: "per_page", fieldCount: 1,
		},
		{
			name: "param errors", err: apperr.List{apperr.Field("page", "{} bad"), apperr.Field("order", "{} bad")},
			status: 400, code: apperr.Invalid, detail: "2 parameters are invalid: page bad; order bad", field: "page", fieldCount: 2,
		},
		{name: "not found", err: apperr.E(apperr.NotFound, "order 9 not found"), status: 404, code: apperr.NotFound, detail: "order 9 not found"},
		{name: "ent not found", err: &ent.NotFoundError{}, status: 404, code: apperr.NotFound, detail: "not found"},
		{name: "no token", err: apperr.ErrNoToken, status: 401, code: apperr.Unauthenticated, detail: apperr.ErrNoToken.Error(), challenge: "Bearer"},
		{name: "bad token", err: apperr.E(apperr.Unauthenticated, "invalid token"), auth: "Bearer x", status: 401, code: apperr.Unauthenticated, detail: "invalid token", challenge: `Bearer error="invalid_token"`},
		{name: "expired token", err: apperr.ErrTokenExpired, auth: "Bearer x", status: 401, code: apperr.Unauthenticated, detail: "token expired", challenge: `Bearer error="invalid_token", error_description="token expired"`},
		{name: "forbidden", err: apperr.E(apperr.Forbidden, "this write needs a dashboard token"), status: 403, code: apperr.Forbidden, detail: "this write needs a dashboard token"},
		{name: "conflict", err: apperr.E(apperr.Conflict, "taken"), status: 409, code: apperr.Conflict, detail: "taken"},
		{name: "too large", err: apperr.E(apperr.TooLarge, "too big"), status: 413, code: apperr.TooLarge, detail: "too big"},
		{name: "unsupported", err: apperr.E(apperr.Unsupported, "not an image"), status: 415, code: apperr.Unsupported, detail: "not an image"},
		{name: "internal", err: errors.New("pq: connection refused at 10.0.0.7"), status: 500, code: apperr.Internal, detail: problem.InternalMessage},
		{name: "internal kind", err: apperr.E(apperr.Internal, "secret detail"), status: 500, code: apperr.Internal, detail: problem.InternalMessage},
		{name: "key reused", err: apperr.E(apperr.KeyReused, "used"), status: 422, code: apperr.KeyReused, detail: "used"},
		// The database down, restarting or too slow: 503 with
		// Retry-After, and no driver text.
		{name: "database down", err: fmt.Errorf("load token 1: %w", dbtest.Refused(t)),
			status: 503, code: apperr.Unavailable, detail: unavailable, retryAfter: apperr.RetryAfter},
		{name: "database shutting down", err: fmt.Errorf("create order: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}),
			status: 503, code: apperr.Unavailable, detail: unavailable, retryAfter: apperr.RetryAfter},
		{name: "connection cut", err: fmt.Errorf("commit: %w", &database.LinkError{Err: io.ErrUnexpectedEOF}), status: 503, code: apperr.Unavailable, detail: unavailable, retryAfter: apperr.RetryAfter},
		// The same errors from anything but the database driver are no
		// outage: a bug if they reach here (decoders answer 400 first).
		{name: "bare EOF", err: fmt.Errorf("read part: %w", io.ErrUnexpectedEOF), status: 500, code: apperr.Internal, detail: problem.InternalMessage},
		{name: "bare network error", err: fmt.Errorf("fetch: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}),
			status: 500, code: apperr.Internal, detail: problem.InternalMessage},
		{name: "statement timeout", err: &pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"},
			status: 503, code: apperr.Unavailable, detail: late, retryAfter: apperr.RetryAfter},
		{name: "request deadline", err: fmt.Errorf("list orders: %w", context.DeadlineExceeded), status: 503, code: apperr.Unavailable, detail: late, retryAfter: apperr.RetryAfter},
		{name: "client went away", err: fmt.Errorf("load material 3: %w", context.Canceled), status: 499, code: apperr.Canceled, detail: "the client closed the request"},
		{name: "constraint is no outage", err: &pgconn.PgError{Code: "22P02"}, status: 500, code: apperr.Internal, detail: problem.InternalMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/x", nil)
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			w := httptest.NewRecorder()
			writeProblem(w, r, tc.err)
			p := problemOf(t, tc.name, w.Code, w.Header(), w.Body.Bytes(), tc.status)
			if p.Code != tc.code || p.Detail != tc.detail {
				t.Errorf("problem = %+v; want code %s, detail %q", p, tc.code, tc.detail)
			}
			if len(p.Errors) != tc.fieldCount {
				t.Fatalf("errors = %+v; want %d", p.Errors, tc.fieldCount)
			}
			if tc.fieldCount > 0 && p.Errors[0].Name != tc.field {
				t.Errorf("errors[0].name = %q; want %q", p.Errors[0].Name, tc.field)
			}
			if got := w.Header().Get("WWW-Authenticate"); got != tc.challenge {
				t.Errorf("WWW-Authenticate = %q; want %q", got, tc.challenge)
			}
			if got := w.Header().Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After = %q; want %q", got, tc.retryAfter)
			}
			// errors is absent, not null, without field errors.
			var raw map[string]json.RawMessage
			json.Unmarshal(w.Body.Bytes(), &raw)
			if _, ok := raw["errors"]; ok != (tc.fieldCount > 0) {
				t.Errorf("errors present = %v; want %v: %s", ok, tc.fieldCount > 0, w.Body)
			}
		})
	}
}

func TestWriteEnvelopeError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		msg    string
	}{
		{"no token", apperr.ErrNoToken, 401, apperr.ErrNoToken.Error()},
		{"internal", errors.New("disk on fire"), 500, problem.InternalMessage},
		{"database down", fmt.Errorf("dial: %w", dbtest.Refused(t)), 503, unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			writeEnvelopeError(w, httptest.NewRequest(http.MethodGet, "/x", nil), tc.err)
			if w.Code != tc.status || w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, %s; want %d, application/json", w.Code, w.Header().Get("Content-Type"), tc.status)
			}
			if got, want := w.Header().Get("Retry-After") != "", tc.status == 503; got != want {
				t.Errorf("Retry-After set %v; want %v", got, want)
			}
			var env map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"success": false, "message": tc.msg, "data": nil}
			if fmt.Sprint(env) != fmt.Sprint(want) {
				t.Errorf("body = %v; want %v", env, want)
			}
		})
	}
}
