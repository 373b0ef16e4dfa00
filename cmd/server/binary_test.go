package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// TestBinary builds the real binary once (with version control stamping,
// as a release build has) and runs it as an operator would: its version,
// and two replicas sharing one database and one S3 bucket.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "server")
	// GOFLAGS may say -buildvcs=false (it does on the project's machines);
	// the flag on the command line wins.
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	version := map[string]string{}
	for line := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
		version[k] = strings.TrimSpace(v)
	}
	t.Run("version", func(t *testing.T) { testVersion(t, bin, version, string(out)) })
	t.Run("replicas share files through s3", func(t *testing.T) { testReplicas(t, bin, version) })
}

// testVersion checks what `server version` printed (out, parsed as got)
// against what the Go toolchain reads from the same binary (go version -m)
// and, in a git clone, against git itself.
func testVersion(t *testing.T, bin string, got map[string]string, out string) {

	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	want := map[string]string{
		"revision": "unknown (built without version control information)",
		"time":     "unknown", "modified": "false", "go": runtime.Version(),
	}
	sc := bufio.NewScanner(bytes.NewReader(meta))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/configurator/catalogue":
			want["version"] = f[2]
		case len(f) == 2 && f[0] == "build":
			k, v, _ := strings.Cut(f[1], "=")
			if name, ok := strings.CutPrefix(k, "vcs."); ok && name != "" {
				want[name] = v
			}
		}
	}
	for _, k := range []string{"version", "revision", "time", "modified", "go"} {
		if got[k] != want[k] {
			t.Errorf("server version: %s = %q; the toolchain reads %q\n%s", k, got[k], want[k], out)
		}
	}

	// Go stamps a build only in a checkout whose .git is a directory (a
	// clone, as CI has; not a git worktree): there, the revision is HEAD's.
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if fi, serr := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || serr != nil || !fi.IsDir() {
		t.Logf("not built in a git clone: only checked against go version -m (%s)", got["revision"])
	} else {
		head, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		if got["revision"] != strings.TrimSpace(string(head)) || !strings.HasPrefix(got["version"], "v") {
			t.Errorf("server version in a git clone: version %q revision %q; want a module version and HEAD %s", got["version"], got["revision"], head)
		}
	}

	if err := exec.Command(bin, "version", "extra").Run(); err == nil || err.(*exec.ExitError).ExitCode() != exitUsage {
		t.Errorf("server version extra: %v; want exit %d", err, exitUsage)
	}
}

// replica is one server process.
type replica struct {
	base           string
	stdout, stderr *testkit.SyncBuffer
	exited         chan struct{}
}

// startReplica runs `bin serve` with env on a free port, in dir, and waits
// until it is ready; it is stopped with SIGTERM when the test ends.
func startReplica(t *testing.T, bin, dir string, env map[string]string) replica {
	t.Helper()
	r := launchReplica(t, bin, dir, env)
	r.wait(t)
	return r
}

// launchReplica starts `bin serve` as startReplica does, without waiting
// for it (wait does), so that several replicas start at once. The
// replica listens on a port the kernel gives it (--addr 127.0.0.1:0) and
// logs, so no other process can take the port between its choice and the
// replica's start, which comes after the migration.
func launchReplica(t *testing.T, bin, dir string, env map[string]string) replica {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	r := replica{stdout: &testkit.SyncBuffer{}, stderr: &testkit.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var err error
	go func() { err = cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		<-r.exited
		if err != nil {
			t.Errorf("replica: %v\n%s", err, r.stderr.String())
		}
	})
	return r
}

var listeningRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// wait reads the replica's address from its log and waits until it is
// ready.
func (r *replica) wait(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for r.base == "" {
		if m := listeningRE.FindStringSubmatch(r.stderr.String()); m != nil {
			r.base = "http://" + m[1]
			break
		}
		select {
		case <-r.exited:
			t.Fatalf("replica exited before it listened:\n%s", r.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica did not listen within a minute:\n%s", r.stderr.String())
		}
	}
	waitReady(t, r.base)
}

// fetch GETs url and returns the status, content type and body.
func fetch(t *testing.T, url, token string) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), b
}

// testReplicas runs two replicas on one database (PostgreSQL when
// TEST_DATABASE_URL is set) and one bucket of a real S3 server, as a
// deployment behind a balancer does: files stored through one are served
// by the other, they live in the bucket and nowhere on the replicas'
// disks, and a failed write leaves nothing in the bucket.
func testReplicas(t *testing.T, bin string, version map[string]string) {
	srv := testkit.StartS3(t)
	bucket := srv.Bucket(t)
	backends := dbtest.Backends()
	db := backends[len(backends)-1] // PostgreSQL when there is one
	const public = "http://catalogue.test"
	env := map[string]string{
		"DATABASE_URL": db.URL(t),
		"STORAGE_URL":  srv.URL(bucket, "catalogue"),
		"PUBLIC_URL":   public,
		"DEMO":         "true",
	}
	for k, v := range srv.Env() {
		env[k] = v
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startReplica(t, bin, dirA, env)
	env["DEMO"] = "false"
	b := startReplica(t, bin, dirB, env)
	token := demoToken(t, a.stdout)
	dash, err := exec.Command(bin, "token", "create", "--dashboard", "--owner", "1", "--database-url", env["DATABASE_URL"]).Output()
	if err != nil {
		t.Fatalf("token create --dashboard: %v", err)
	}
	dashboard := strings.TrimSpace(string(dash))

	for _, r := range []replica{a, b} {
		status, _, body := fetch(t, r.base+"/healthz", "")
		var h map[string]string
		json.Unmarshal(body, &h)
		wantRev := version["revision"]
		if strings.HasPrefix(wantRev, "unknown") {
			wantRev = ""
		}
		if status != http.StatusOK || h["status"] != "ok" || h["version"] != version["version"] || h["revision"] != wantRev {
			t.Errorf("GET %s/healthz = %d %s; want ok with version %q and revision %q", r.base, status, body, version["version"], wantRev)
		}
	}

	// served checks that every replica serves url (an absolute URL under
	// PUBLIC_URL, which the balancer would route to any replica) with data.
	served := func(t *testing.T, url string, data []byte) {
		t.Helper()
		p, ok := strings.CutPrefix(url, public+"/files/")
		if !ok {
			t.Fatalf("file URL %q is not under %s/files/", url, public)
		}
		for _, r := range []replica{a, b} {
			status, ctype, got := fetch(t, r.base+"/files/"+p, "")
			if status != http.StatusOK || ctype != "image/png" || (data != nil && !bytes.Equal(got, data)) {
				t.Errorf("GET %s/files/%s = %d %s, %d bytes; want 200 image/png and the stored bytes", r.base, p, status, ctype, len(got))
			}
		}
	}
	// inBucket checks that the bucket holds exactly the objects of urls
	// beside the ones it held before (keys under the URL's prefix).
	inBucket := func(t *testing.T, before []string, urls ...string) []string {
		t.Helper()
		want := slices.Clone(before)
		for _, u := range urls {
			want = append(want, "catalogue/"+path.Base(u))
		}
		slices.Sort(want)
		got := srv.Keys(t, bucket)
		if !slices.Equal(got, want) {
			t.Errorf("bucket holds %q; want %q", got, want)
		}
		return got
	}

	var keys []string
	t.Run("order with files through A, read through B", func(t *testing.T) {
		snap, printMap := testkit.PNG(30, 20, 1), testkit.PNG(40, 10, 2)
		var order struct {
			ID                   int
			ConfiguratorSnapshot string   `json:"configurator_snapshot"`
			ConfiguratorPrintMap []string `json:"configurator_print_map"`
		}
		status := postForm(t, a.base+"/api/open-api/v1/orders", token, map[string]string{
			"price": "249.90", "configurator_id": "1", "customer_details": `{"name": "Ada"}`, "configurator_summary": `{}`,
		}, map[string][]byte{"configurator_snapshot": snap, "configurator_print_map": printMap}, &order)
		if status != http.StatusCreated || len(order.ConfiguratorPrintMap) != 1 {
			t.Fatalf("POST /orders through A = %d %+v; want 201 with a snapshot and a print map", status, order)
		}
		served(t, order.ConfiguratorSnapshot, snap)
		served(t, order.ConfiguratorPrintMap[0], printMap)
		keys = inBucket(t, nil, order.ConfiguratorSnapshot, order.ConfiguratorPrintMap[0])
		if len(keys) == 2 && !bytes.Equal(srv.Object(t, bucket, "catalogue/"+path.Base(order.ConfiguratorSnapshot)), snap) {
			t.Error("the snapshot's object holds other bytes than the upload")
		}

		status, _, body := fetch(t, fmt.Sprintf("%s/api/open-api/v1/orders/%d", b.base, order.ID), token)
		var again struct {
			ConfiguratorSnapshot string `json:"configurator_snapshot"`
		}
		json.Unmarshal(body, &again)
		if status != http.StatusOK || again.ConfiguratorSnapshot != order.ConfiguratorSnapshot {
			t.Errorf("GET /orders/%d through B = %d %s; want the snapshot %s", order.ID, status, body, order.ConfiguratorSnapshot)
		}
	})

	t.Run("texture and thumbnails through B, served by A", func(t *testing.T) {
		img := testkit.PNG(300, 200, 3)
		var created struct {
			Status  string
			Texture struct {
				TextureFile         string `json:"texture_file"`
				TextureThumbnail50  string `json:"texture_thumbnail_50"`
				TextureThumbnail100 string `json:"texture_thumbnail_100"`
			}
		}
		status := postForm(t, b.base+"/api/open-api/v1/textures", dashboard, map[string]string{"name": "Moss"}, map[string][]byte{"file": img}, &created)
		tx := created.Texture
		if status != http.StatusCreated || tx.TextureThumbnail50 == "" || tx.TextureThumbnail100 == "" {
			t.Fatalf("POST /textures through B = %d %+v; want 201 with two thumbnails", status, created)
		}
		served(t, tx.TextureFile, img)
		served(t, tx.TextureThumbnail50, nil)
		served(t, tx.TextureThumbnail100, nil)
		keys = inBucket(t, keys, tx.TextureFile, tx.TextureThumbnail50, tx.TextureThumbnail100)
	})

	t.Run("failed order leaves nothing in the bucket", func(t *testing.T) {
		// The snapshot is stored, then the print map is refused: the
		// snapshot's object must be removed again.
		var problem struct{ Status int }
		status := postForm(t, a.base+"/api/open-api/v1/orders", token, map[string]string{
			"price": "10", "configurator_id": "1", "customer_details": `{}`, "configurator_summary": `{}`,
		}, map[string][]byte{"configurator_snapshot": testkit.PNG(5, 5, 4), "configurator_print_map": []byte("not an image")}, &problem)
		if status != http.StatusBadRequest {
			t.Fatalf("POST /orders with a bad print map = %d; want 400", status)
		}
		inBucket(t, keys)
	})

	t.Run("nothing on the replicas' disks", func(t *testing.T) {
		for _, dir := range []string{dirA, dirB} {
			if _, err := os.Stat(filepath.Join(dir, "data", "uploads")); !os.IsNotExist(err) {
				t.Errorf("%s/data/uploads exists (%v); files must go to the bucket only", dir, err)
			}
		}
	})

	t.Run("missing bucket stops the start", func(t *testing.T) {
		// A replica that would serve instead is killed after a minute, so
		// the test fails rather than hangs.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "serve", "--addr", testkit.FreeAddr(t))
		cmd.Dir = t.TempDir()
		cmd.Env = os.Environ()
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Env = append(cmd.Env, "STORAGE_URL="+srv.URL("no-such-bucket", ""))
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitError || !strings.Contains(string(out), "bucket no-such-bucket does not exist") {
			t.Errorf("serve with a missing bucket: %v\n%s\nwant exit %d naming the bucket", err, out, exitError)
		}
	})
}
