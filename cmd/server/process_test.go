package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/privacy"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/testkit"
)

// TestMain removes the binary the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	binErr    error
)

// binary builds the server once per test run and returns its path; the
// tests that need the real process (signals, a database that goes away)
// run it.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	buildOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "server-bin-"); binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "server"), ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "server")
}

// process is the server binary running on loopback.
type process struct {
	cmd            *exec.Cmd
	base           string
	token          string // the demo token, owner 1's configurator 1
	stdout, stderr *testkit.SyncBuffer
	exited         chan error
}

// startBinary runs `server serve` with env (added to the test's
// environment) on a free loopback port, waits until it is ready and reads
// its demo token; it is killed when the test ends, if still running.
func startBinary(t *testing.T, env map[string]string) *process {
	t.Helper()
	bin := binary(t)
	addr := testkit.FreeAddr(t)
	p := &process{base: "http://" + addr, stdout: &testkit.SyncBuffer{}, stderr: &testkit.SyncBuffer{}, exited: make(chan error, 1)}
	p.cmd = exec.Command(bin, "serve", "--addr", addr)
	p.cmd.Env = append(os.Environ(), "UPLOAD_DIR="+t.TempDir())
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("server log (last 4000 bytes):\n%s", tail(p.stderr.String(), 4000))
		}
	})
	waitReady(t, p.base)
	p.token = demoToken(t, p.stdout)
	return p
}

// demoToken returns the demo token a ready server printed on stdout. The
// process printed it before it listened, but the pipe of its stdout may
// deliver it a moment after readiness is seen.
func demoToken(t *testing.T, stdout *testkit.SyncBuffer) string {
	t.Helper()
	m := tokenRE.FindStringSubmatch(stdout.String())
	for deadline := time.Now().Add(10 * time.Second); m == nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		m = tokenRE.FindStringSubmatch(stdout.String())
	}
	if m == nil {
		t.Fatalf("serve printed no demo token:\n%s", stdout.String())
	}
	return m[1]
}

// sigterm sends SIGTERM to the process.
func (p *process) sigterm(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// wait waits up to d for the process to exit and returns its error.
func (p *process) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		return err
	case <-time.After(d):
		t.Fatalf("the server has not exited %s after SIGTERM", d)
		return nil
	}
}

// startLogged starts cmd with its output kept, kills it when the test
// ends and then shows the output's end if the test failed; name says
// whose output it is.
func startLogged(t *testing.T, cmd *exec.Cmd, name string) *testkit.SyncBuffer {
	t.Helper()
	var out testkit.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s log (last 4000 bytes):\n%s", name, tail(out.String(), 4000))
		}
	})
	return &out
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// ordersByKey reads every order of the database at dbURL that a test
// created, keyed by the "key" its customer_details carry, with the ids of
// the orders of each key (more than one is a duplicate).
func ordersByKey(t *testing.T, dbURL string) map[string][]int {
	t.Helper()
	ctx := context.Background()
	c, err := database.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	orders, err := c.Order.Query().All(privacy.DecisionContext(ctx, privacy.Allow))
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string][]int{}
	for _, o := range orders {
		if k := keyOf(o); k != "" {
			byKey[k] = append(byKey[k], o.ID)
		}
	}
	for _, ids := range byKey {
		slices.Sort(ids)
	}
	return byKey
}

func keyOf(o *ent.Order) string {
	var d struct {
		Key string `json:"key"`
	}
	json.Unmarshal(o.CustomerDetails, &d)
	return d.Key
}

// loadClient is an HTTP client for many concurrent requests to one
// server: enough idle connections kept for every worker, and a timeout
// that turns a hang into an error.
func loadClient(conns int, timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conns
	tr.MaxIdleConnsPerHost = conns
	return &http.Client{Transport: tr, Timeout: timeout}
}

// withParam returns dbURL with the query parameter k=v added.
func withParam(dbURL, k, v string) string {
	sep := "?"
	if strings.Contains(dbURL, "?") {
		sep = "&"
	}
	return dbURL + sep + k + "=" + v
}
