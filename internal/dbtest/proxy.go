package dbtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/configurator/catalogue/internal/testkit"
)

// Proxy forwards TCP connections to a PostgreSQL server and can drop them,
// so that a test gets the errors the driver really gives when the
// database goes away in the middle of a statement.
type Proxy struct {
	// URL is the database URL it was made for, with its host replaced by
	// the proxy's.
	URL string

	ln     net.Listener
	target string
	cut    atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

// PostgresServer returns a PostgreSQL URL a test may break: a schema of
// TEST_DATABASE_URL when it is set, else a throwaway cluster of its own
// (NewCluster), so that such a test runs under every configuration.
func PostgresServer(t testing.TB) string {
	t.Helper()
	if os.Getenv(EnvPostgres) != "" {
		return postgresURL(t)
	}
	return NewCluster(t).URL
}

// NewProxy starts a proxy in front of the server of rawURL, closed when
// the test ends.
func NewProxy(t testing.TB, rawURL string) *Proxy {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: u.Host}
	u.Host = ln.Addr().String()
	p.URL = u.String()
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.closeAll()
	})
	return p
}

// Drop closes every connection at once, whatever it is doing (a result
// set being read ends in the middle), and every new one as it arrives.
func (p *Proxy) Drop() {
	p.cut.Store(true)
	p.closeAll()
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *Proxy) forward(client net.Conn) {
	if p.cut.Load() {
		client.Close()
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, client, server)
	p.mu.Unlock()
	go func() {
		io.Copy(client, server)
		client.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := client.Read(buf)
		if err != nil {
			break
		}
		if _, err := server.Write(buf[:n]); err != nil {
			break
		}
	}
	client.Close()
	server.Close()
}

func (p *Proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// Refused returns the error the driver gives when nothing listens where
// the database should be: a real *pgconn.ConnectError (connection
// refused), for tests of how an outage is answered.
func Refused(t testing.TB) error {
	t.Helper()
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/x?sslmode=disable&connect_timeout=5", testkit.FreePort(t))
	c, err := pgconn.Connect(context.Background(), u)
	if err == nil {
		c.Close(context.Background())
		t.Fatalf("connected to %s, where nothing should listen", u)
	}
	return err
}
