// Package testkit holds the small helpers of the tests that start real
// servers (the binary, PostgreSQL clusters, Redis, an S3 server): a free
// loopback address and a buffer a running server and the test share.
package testkit

import (
	"bytes"
	"net"
	"strconv"
	"sync"
	"testing"
)

// FreeAddr returns a loopback host:port that nothing listens on (at the
// time of the call: the caller's server binds it next).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// FreePort is FreeAddr's port.
func FreePort(t testing.TB) int {
	t.Helper()
	_, port, _ := net.SplitHostPort(FreeAddr(t))
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// SyncBuffer is an io.Writer that a running server writes its output to
// while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
