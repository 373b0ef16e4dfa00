// Package testkit holds the helpers of every package's tests that need no
// database: the real servers tests start (Redis, an S3 server, a headless
// Chromium that checks pages as a browser renders them), free
// loopback addresses, a buffer a running server and the test share, test
// images, the GraphQL documents that attack cost bounds, and the checks of
// caching headers. The helpers over a database are internal/dbtest's.
package testkit

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
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
	return int(netip.MustParseAddrPort(FreeAddr(t)).Port())
}

// Missing skips the test for want of what (a server binary, a browser),
// saying how to install it; under CI=true, where .ci/run installs every
// tool, it fails the test instead, so that CI cannot pass by skipping.
func Missing(t testing.TB, what, install string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing; CI must install it: %s", what, install)
	}
	t.Skipf("%s is missing, skipping: %s", what, install)
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

// CPUTime is the CPU time (user and system) the process has used, in
// nanoseconds: benchmarks report it per operation (cpu-ns/op), which a
// busy machine moves less than the time per operation.
func CPUTime(tb testing.TB) int64 {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
