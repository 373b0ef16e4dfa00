package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Unavailable reports whether err means that the database could not
// answer now but may later: it is down, restarting, out of connections,
// cut off, or a statement ran past statement_timeout. Such a failure is
// the service's outage, not the request's fault nor a bug: both
// transports answer it 503 with Retry-After, and a retry is safe (an
// order creation rolls back, and its Idempotency-Key makes the retry
// exact).
//
// Only the database driver's own reports count: PostgreSQL's SQLSTATEs,
// pgx's connect and timeout errors, a failure of the connection's socket
// (marked LinkError where it left the socket, since pgx returns io.EOF
// and net errors bare), database/sql's broken connections, and SQLite's
// busy lock. A bare io.EOF, io.ErrUnexpectedEOF or net error is someone
// else's (a decoder of the client's input, another service) and is no
// database outage.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableState(pgErr.Code)
	}
	var connectErr *pgconn.ConnectError
	var linkErr *LinkError
	var sqliteErr *sqlite.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &linkErr),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, pgconn.ErrConnClosed),
		pgconn.SafeToRetry(err), pgconn.Timeout(err):
		return true
	case errors.As(err, &sqliteErr):
		// SQLITE_BUSY and SQLITE_LOCKED (and their extended codes): the
		// writer lock stayed taken past busy_timeout.
		code := sqliteErr.Code() & 0xff
		return code == 5 || code == 6
	}
	return false
}

// unavailableState reports whether a PostgreSQL SQLSTATE is an outage:
// class 08 (connection exception), class 53 (insufficient resources, such
// as too many connections), admin, crash and startup shutdowns (57P01,
// 57P02, 57P03, 57P05), and 57014 (query_canceled: statement_timeout).
func unavailableState(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"):
		return true
	}
	switch code {
	case "57P01", "57P02", "57P03", "57P05", "57014":
		return true
	}
	return false
}

// Deadline reports whether err is a request that ran out of time: its
// context's deadline passed, or PostgreSQL cancelled a statement after
// statement_timeout.
func Deadline(err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &pgErr) && pgErr.Code == "57014"
}

// WithStatementTimeout returns the PostgreSQL URL rawURL with
// statement_timeout set to d, a run-time parameter that the driver sends
// when it connects, so that no statement of the service's connections runs
// longer than d. A URL that sets statement_timeout itself keeps it; d <= 0
// and SQLite URLs leave the URL alone.
func WithStatementTimeout(rawURL string, d time.Duration) (string, error) {
	if d <= 0 || dialectOf(rawURL) != "postgres" {
		return rawURL, nil
	}
	return defaultParam(rawURL, "statement_timeout", strconv.FormatInt(max(d.Milliseconds(), 1), 10))
}

// defaultParam sets the query parameter key of rawURL to value unless the
// URL names it already: the operator's URL has the last word on every
// run-time parameter the service sets.
func defaultParam(rawURL, key, value string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	q := u.Query()
	if q.Has(key) {
		return rawURL, nil
	}
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
