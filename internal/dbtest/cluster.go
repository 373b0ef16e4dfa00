package dbtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/testkit"
)

// Cluster is a throwaway PostgreSQL server of one test: its own data
// directory in a temporary directory and its own port on loopback, so a
// test may stop and restart it (to see the service survive an outage)
// without disturbing the shared server at 5432 that the other tests use.
type Cluster struct {
	// URL is the DSN of the cluster's database postgres, as user postgres
	// (trust authentication, plain TCP on 127.0.0.1).
	URL  string
	Port int

	bin, dir, data string
	settings       string // the server's options, given at every start
	asPostgres     bool
	frozen         bool
	t              testing.TB
}

// NewCluster initialises and starts a cluster, stopped and removed when
// the test ends. It skips the test when the PostgreSQL server binaries
// (found through pg_config --bindir) are missing, except under CI=true,
// where a missing tool fails it. initdb refuses to run as root, so as
// root the server runs as the postgres OS user, in a directory it owns.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	bin := serverBinDir(t)
	c := &Cluster{bin: bin, t: t, asPostgres: os.Geteuid() == 0}
	dir, err := os.MkdirTemp("", "pgcluster-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir, c.data = dir, filepath.Join(dir, "data")
	t.Cleanup(func() { os.RemoveAll(dir) })
	if c.asPostgres {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, a throwaway PostgreSQL needs the postgres OS user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	c.Port = testkit.FreePort(t)
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.Port)
	c.run("initdb", "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	c.settings = fmt.Sprintf("-c port=%d -c listen_addresses=127.0.0.1 -c unix_socket_directories='%s' -c fsync=off -c max_connections=100", c.Port, dir)
	c.Start()
	t.Cleanup(func() { c.stop("immediate", false) })
	return c
}

// Start starts the stopped cluster and returns once it accepts
// connections.
func (c *Cluster) Start() {
	c.t.Helper()
	c.run("pg_ctl", "start", "-w", "-t", "60", "-D", c.data, "-l", filepath.Join(c.dir, "log"), "-o", c.settings)
}

// Stop stops the cluster in mode (smart, fast or immediate: immediate is
// a crash, every connection cut without a goodbye, recovered from the
// WAL on the next start) and returns once it is down.
func (c *Cluster) Stop(mode string) {
	c.t.Helper()
	c.stop(mode, true)
}

func (c *Cluster) stop(mode string, must bool) {
	if c.frozen {
		c.Thaw()
	}
	args := []string{"stop", "-w", "-t", "60", "-m", mode, "-D", c.data}
	if !must {
		c.command("pg_ctl", args...).Run()
		return
	}
	c.run("pg_ctl", args...)
}

// Freeze stops every process of the cluster (SIGSTOP): its connections
// stay open and new ones are accepted by the kernel, but nothing answers,
// as when a network partition or a stalled disk hangs the database
// instead of failing it. Thaw resumes it.
func (c *Cluster) Freeze() {
	c.t.Helper()
	c.signal(syscall.SIGSTOP)
	c.frozen = true
}

// Thaw resumes a frozen cluster (SIGCONT).
func (c *Cluster) Thaw() {
	c.t.Helper()
	c.signal(syscall.SIGCONT)
	c.frozen = false
}

// signal sends sig to the postmaster, then to its children (the
// postmaster first, so that it forks no new child meanwhile).
func (c *Cluster) signal(sig syscall.Signal) {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.data, "postmaster.pid"))
	if err != nil {
		c.t.Fatalf("find the postmaster: %v", err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		c.t.Fatalf("postmaster.pid: %v", err)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		c.t.Fatalf("signal the postmaster %d: %v", pid, err)
	}
	for _, child := range children(pid) {
		syscall.Kill(child, sig)
	}
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// Log returns the server's log, for a failing test's message.
func (c *Cluster) Log() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "log"))
	return string(b)
}

// run runs one server binary and fails the test when it fails.
func (c *Cluster) run(name string, args ...string) {
	c.t.Helper()
	var out bytes.Buffer
	cmd := c.command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		c.t.Fatalf("%s %s: %v\n%s\n%s", name, strings.Join(args, " "), err, out.String(), c.Log())
	}
}

// command runs a server binary as the cluster's owner. pg_ctl start
// leaves the server running, so the command's output is not waited on
// beyond the process itself (WaitDelay).
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	var cmd *exec.Cmd
	if c.asPostgres {
		cmd = exec.CommandContext(context.Background(), "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(context.Background(), path, args...)
	}
	cmd.Dir = c.dir
	cmd.WaitDelay = time.Second
	return cmd
}

// serverBinDir is the directory of initdb and pg_ctl, per pg_config.
func serverBinDir(t testing.TB) string {
	t.Helper()
	missing := func(what string) string {
		testkit.Missing(t, what+" (a throwaway PostgreSQL)", "apt-get install postgresql")
		return ""
	}
	out, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return missing("pg_config")
	}
	dir := strings.TrimSpace(string(out))
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return missing(filepath.Join(dir, name))
		}
	}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("runuser"); err != nil {
			return missing("runuser (to run initdb as the postgres user)")
		}
	}
	return dir
}
