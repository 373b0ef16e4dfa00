package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisInstall is what installs the server, as .ci/run does it.
const RedisInstall = "apt-get install -y redis-server"

// Redis is a redis-server the test started.
type Redis struct {
	// Addr is HOST:PORT on loopback.
	Addr string

	t   testing.TB
	bin string
	dir string

	mu  sync.Mutex
	cmd *exec.Cmd
	out *bytes.Buffer
}

// StartRedis starts a server on a free port; it is killed when the test ends.
// Without redis-server the test is skipped, or fails under CI=true.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Missing(t, "redis-server", RedisInstall)
	}
	s := &Redis{t: t, bin: bin, dir: t.TempDir(), Addr: FreeAddr(t)}
	s.Start()
	t.Cleanup(s.Kill)
	return s
}

// URL is the server's REDIS_URL.
func (s *Redis) URL() string { return "redis://" + s.Addr }

// Start starts the server again on its port after Kill (a first start is
// Start's); it returns once the server answers PING.
func (s *Redis) Start() {
	s.t.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out = &bytes.Buffer{}
	s.cmd = exec.Command(s.bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--daemonize", "no", "--loglevel", "warning")
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !ping(s.Addr) {
		if time.Now().After(deadline) {
			s.cmd.Process.Kill()
			s.cmd.Wait()
			s.t.Fatalf("redis-server never answered on %s:\n%s", s.Addr, s.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill kills the server (SIGKILL, as a crash or an outage); its data is
// gone. It is safe to call when the server is not running.
func (s *Redis) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Freeze stops the server's process (SIGSTOP): connections stay open and
// new ones are accepted by the kernel, but nothing answers, as in a
// network partition. Thaw resumes it.
func (s *Redis) Freeze() { s.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT).
func (s *Redis) Thaw() { s.signal(syscall.SIGCONT) }

func (s *Redis) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		s.cmd.Process.Signal(sig)
	}
}

// Do sends one command (its words) and returns its answer as Redis
// writes it, less the type mark: an integer's digits, a bulk string's
// value ("" for none), a status or an error's text; for tests that look
// into the server.
func (s *Redis) Do(t testing.TB, args ...string) string {
	t.Helper()
	reply, err := call(s.Addr, args...)
	if err != nil {
		t.Fatalf("redis %s: %v", s.Addr, err)
	}
	return reply
}

// call sends one command to the Redis at addr, on a connection of its own,
// and returns its answer as Do does.
func call(addr string, args ...string) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
	defer c.Close()
	cmd := make([]any, len(args))
	for i, a := range args {
		cmd[i] = a
	}
	v, err := c.Do(context.Background(), cmd...).Result()
	var reply redis.Error
	switch {
	case errors.Is(err, redis.Nil):
		return "", nil
	case errors.As(err, &reply):
		return reply.Error(), nil
	case err != nil:
		return "", err
	}
	return fmt.Sprint(v), nil
}

// ping reports whether a Redis answers PING at addr.
func ping(addr string) bool {
	reply, err := call(addr, "PING")
	return err == nil && reply == "PONG"
}
