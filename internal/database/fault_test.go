package database_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// TestUnavailableOnlyFromTheDriver: the errors PostgreSQL's driver gives
// when the database cannot be reached, or when the connection is cut in
// the middle of a result set (through a proxy that drops it), are
// outages; the same io.EOF, io.ErrUnexpectedEOF or network error from
// anywhere else (a decoder of the client's input, another service) is
// not.
func TestUnavailableOnlyFromTheDriver(t *testing.T) {
	ctx := context.Background()
	refused := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/x?sslmode=disable&connect_timeout=5", testkit.FreePort(t))
	_, err := database.Open(ctx, refused)
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || !database.Unavailable(err) {
		t.Errorf("Open(a closed port) = %v; want an outage (connection refused)", err)
	}

	proxy := dbtest.NewProxy(t, dbtest.PostgresServer(t))
	db, _, err := database.OpenSQL(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT generate_series(1, 1000000)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	proxy.Drop()
	for rows.Next() {
	}
	err = rows.Err()
	if err == nil || !(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("a statement on a cut connection: %v; want the socket's end", err)
	}
	if !database.Unavailable(err) {
		t.Errorf("Unavailable(%v) = false for the driver's cut connection", err)
	}

	for _, err := range []error{
		io.EOF,
		io.ErrUnexpectedEOF,
		fmt.Errorf("decode the cursor: %w", io.EOF),
		fmt.Errorf("read the part: %w", io.ErrUnexpectedEOF),
		&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET},
		fmt.Errorf("fetch the keys: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}),
		syscall.EPIPE,
	} {
		if database.Unavailable(err) {
			t.Errorf("Unavailable(%#v) = true; only the database driver reports an outage", err)
		}
	}
}
