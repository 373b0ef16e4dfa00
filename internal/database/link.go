package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// LinkError is a failure of the network connection to PostgreSQL: the
// error a read or a write of the driver's socket gave (io.EOF, a reset,
// a timeout), marked where it left the socket. pgx returns these errors
// as they are, so without the mark an io.EOF of a cut connection could
// not be told from the io.EOF of a decoder of the client's input, and
// only the first is an outage (Unavailable).
type LinkError struct{ Err error }

// Error is the socket's own message.
func (e *LinkError) Error() string { return e.Err.Error() }

// Unwrap lets errors.Is find the socket's error (io.EOF, a syscall.Errno).
func (e *LinkError) Unwrap() error { return e.Err }

// Timeout passes the socket error's Timeout on, so that pgx still tells a
// deadline (its context watcher's) from a cut.
func (e *LinkError) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout() || errors.Is(e.Err, os.ErrDeadlineExceeded)
}

// Temporary is part of net.Error, which crypto/tls asserts on a read's
// error; a cut connection is never temporary.
func (e *LinkError) Temporary() bool { return false }

// linkConn is a connection to PostgreSQL whose errors are LinkErrors.
type linkConn struct{ net.Conn }

func (c linkConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	return n, mark(err)
}

func (c linkConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	return n, mark(err)
}

func mark(err error) error {
	if err == nil {
		return nil
	}
	return &LinkError{Err: err}
}

// MarkLink has every connection cfg opens mark its socket's errors
// (LinkError). It wraps the dialled socket, under TLS when there is TLS,
// so that pgx still finds its *tls.Conn (SCRAM channel binding); an end
// of the stream that TLS itself reports (a close_notify) is therefore
// not marked, but PostgreSQL sends a FATAL error before it closes a
// session, which is classified by its SQLSTATE.
func MarkLink(cfg *pgconn.Config) {
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return linkConn{c}, nil
	}
}

// lostMark is when a pool's database was last seen out of reach (Unix
// nanoseconds; 0: never): NoteLost sets it.
type lostMark struct{ at atomic.Int64 }

// idleSince is whether a connection idle for idle was last used before
// the mark, so that the outage may have cut it.
func (m *lostMark) idleSince(idle time.Duration) bool {
	at := m.at.Load()
	return at != 0 && time.Since(time.Unix(0, at)) <= idle
}

// mark records that the pool's database was seen out of reach just now.
func (m *lostMark) mark() { m.at.Store(time.Now().UnixNano()) }

// pgConnector connects to PostgreSQL through pgx's database/sql driver,
// each connection's socket errors marked (MarkLink), and pinged before
// reuse only after pingIdle idle, or when it has been idle since lost
// (not nil) was marked: by NoteLost, or by a connection of the pool that
// received the server's goodbye (57P01 an administrator's shutdown or
// restart, 57P02 a crash), which every other one received too.
func pgConnector(dsn string, lost *lostMark) (driver.Connector, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	MarkLink(&cfg.Config)
	if onErr := cfg.OnPgError; lost != nil {
		cfg.OnPgError = func(c *pgconn.PgConn, e *pgconn.PgError) bool {
			if e.Code == "57P01" || e.Code == "57P02" {
				lost.mark()
			}
			return onErr == nil || onErr(c, e)
		}
	}
	return stdlib.GetConnector(*cfg, stdlib.OptionShouldPing(func(_ context.Context, p stdlib.ShouldPingParams) bool {
		return p.IdleDuration > pingIdle || lost != nil && lost.idleSince(p.IdleDuration)
	})), nil
}
