package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/endpoint"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/problem"
)

// TestClassifyOutage: the database down, restarting, cut off or too slow
// is UNAVAILABLE, with a message that holds no driver text; other
// database errors stay INTERNAL, and so does an io.EOF or a network
// error that the driver did not report (internal/database's
// TestUnavailableOnlyFromTheDriver cuts a real connection).
func TestClassifyOutage(t *testing.T) {
	for _, tc := range []struct {
		err  error
		kind apperr.Kind
	}{
		{fmt.Errorf("load token 1: %w", dbtest.Refused(t)), apperr.Unavailable},
		{fmt.Errorf("create order: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}), apperr.Unavailable},
		{&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, apperr.Unavailable},
		{&pgconn.PgError{Code: "53300", Message: "too many connections"}, apperr.Unavailable},
		{fmt.Errorf("commit: %w", &database.LinkError{Err: io.ErrUnexpectedEOF}), apperr.Unavailable},
		{&pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}, apperr.Unavailable},
		{fmt.Errorf("list: %w", context.DeadlineExceeded), apperr.Unavailable},
		{&pgconn.PgError{Code: "42P01", Message: `relation "orders" does not exist`}, apperr.Internal},
		{errors.New("something else"), apperr.Internal},
		// The same errors from anything but the driver are no outage.
		{fmt.Errorf("commit: %w", io.ErrUnexpectedEOF), apperr.Internal},
		{fmt.Errorf("decode: %w", io.EOF), apperr.Internal},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, apperr.Internal},
	} {
		got := problem.Classify(tc.err)
		if got.Kind != tc.kind {
			t.Errorf("Classify(%v) = %s; want %s", tc.err, got.Kind, tc.kind)
		}
		if msg := got.Error(); strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "SQLSTATE") || strings.Contains(msg, "terminating") {
			t.Errorf("Classify(%v) message %q shows driver text", tc.err, msg)
		}
	}
}

// TestOutage: a GraphQL response with an UNAVAILABLE error is sent as 503
// with Retry-After: a mutation whose deadline passes while the database
// is held up (SQLite's write lock taken by another connection), and a
// request whose deadline passed before it ran (gqlgen's bare null). One
// with another error, or none, keeps its 200.
func TestOutage(t *testing.T) {
	url := dbtest.SQLite(t)
	c := dbtest.Open(t, url)
	owner := dbtest.NewTenant(t, c, "A", "C")
	conf := owner.Confs[0]
	h := endpoint.Outage(endpoint.NewHandler(graph.NewResolver(c), nil, endpoint.HandlerOptions{}))
	db := dbtest.SQL(t, url)
	locker, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	create := fmt.Sprintf(`mutation { createOrder(input: {configuratorID: "%d", price: 1, customerDetails: {}, configuratorSummary: {}}) { id } }`, conf.ID)
	for _, tc := range []struct {
		name     string
		query    string
		deadline time.Duration // from the start of the request; negative: passed before
		locked   bool
		status   int
	}{
		{"no error", `{ ordersPage { data { id } } }`, time.Minute, false, http.StatusOK},
		{"not found", `{ order(id: 999) { id } }`, time.Minute, false, http.StatusOK},
		{"database held up", create, 500 * time.Millisecond, true, http.StatusServiceUnavailable},
		{"deadline passed before", `{ ordersPage { data { id } } }`, -time.Second, false, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.locked {
				if _, err := locker.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
					t.Fatal(err)
				}
				defer locker.ExecContext(context.Background(), "ROLLBACK")
			}
			ctx, cancel := context.WithDeadline(owner.Dash(0), time.Now().Add(tc.deadline))
			defer cancel()
			body, _ := json.Marshal(map[string]string{"query": tc.query})
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			wantRetry := ""
			if tc.status == http.StatusServiceUnavailable {
				wantRetry = apperr.RetryAfter
			}
			if rec.Code != tc.status || rec.Header().Get("Retry-After") != wantRetry {
				t.Errorf("%d, Retry-After %q: %s; want %d, %q", rec.Code, rec.Header().Get("Retry-After"), rec.Body, tc.status, wantRetry)
			}
			// A declared length is the body's (the recorder does not
			// enforce it; net/http would cut the body off).
			if cl := rec.Header().Get("Content-Length"); cl != "" && cl != strconv.Itoa(rec.Body.Len()) {
				t.Errorf("Content-Length %s for a body of %d bytes: %s", cl, rec.Body.Len(), rec.Body)
			}
			if tc.status == http.StatusServiceUnavailable && !strings.Contains(rec.Body.String(), `"code":"UNAVAILABLE"`) {
				t.Errorf("body %s; want extensions.code UNAVAILABLE", rec.Body)
			}
		})
	}
}

// TestReject: a request refused before it runs gets the status of its
// kind and a GraphQL error body.
func TestReject(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   apperr.Kind
		header string
	}{
		{apperr.E(apperr.Unauthenticated, "invalid token"), http.StatusUnauthorized, apperr.Unauthenticated, "WWW-Authenticate"},
		{apperr.E(apperr.Invalid, "the Idempotency-Key header must be 1 to 255 characters, got 300"), http.StatusBadRequest, apperr.Invalid, ""},
		{fmt.Errorf("load token 1: %w", dbtest.Refused(t)), http.StatusServiceUnavailable, apperr.Unavailable, "Retry-After"},
		{errors.New("disk on fire"), http.StatusInternalServerError, apperr.Internal, ""},
	} {
		rec := httptest.NewRecorder()
		endpoint.Reject(rec, httptest.NewRequest(http.MethodPost, "/graphql", nil), tc.err)
		var body struct {
			Errors []struct {
				Message    string
				Extensions struct{ Code apperr.Kind }
			}
		}
		json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != tc.status || len(body.Errors) != 1 || body.Errors[0].Extensions.Code != tc.code {
			t.Errorf("Reject(%v) = %d %s; want %d with code %s", tc.err, rec.Code, rec.Body, tc.status, tc.code)
		}
		if tc.header != "" && rec.Header().Get(tc.header) == "" {
			t.Errorf("Reject(%v) has no %s", tc.err, tc.header)
		}
		if strings.Contains(rec.Body.String(), "disk") || strings.Contains(rec.Body.String(), "refused") {
			t.Errorf("Reject(%v) shows the cause: %s", tc.err, rec.Body)
		}
	}
}
