package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/testkit"
)

// haproxyConfig is the balancer's configuration of the deployment guide,
// which TestReplicas runs with its own addresses.
const haproxyConfig = "../../docs/haproxy.cfg"

// TestReplicas runs a deployment on one machine: three replicas of the
// binary started at once on one empty PostgreSQL database (a throwaway
// cluster of the test's own, so that its 60-odd connections and its
// outage-free run depend on no other test), one bucket of a real
// S3-compatible server and one Redis, behind HAProxy configured by the
// deployment guide's docs/haproxy.cfg. It shows that all three migrated
// without error, and that any replica serves what another wrote: an order
// and its files, share links, idempotent retries, a token revoked with the
// CLI (refused by every replica within a second), one shared rate
// budget, and a subscription on one replica hearing a write on another.
func TestReplicas(t *testing.T) {
	bin := binary(t)
	haproxy := haproxyBinary(t)
	cl := dbtest.NewCluster(t)
	s3 := testkit.StartS3(t)
	bucket := s3.Bucket(t)
	rds := testkit.StartRedis(t)
	dbURL, reference := createDatabase(t, cl.URL, "catalogue"), createDatabase(t, cl.URL, "reference")
	// The balancer's public name: the test reaches it (and the replicas)
	// by address, as a client behind DNS would.
	const public = "http://catalogue.test"
	const budget = 120 // units a minute: one back every 0.5 s
	env := map[string]string{
		"DATABASE_URL": dbURL, "STORAGE_URL": s3.URL(bucket, ""), "REDIS_URL": rds.URL(),
		"PUBLIC_URL": public, "DEMO": "false", "RATE_LIMIT_PER_MINUTE": strconv.Itoa(budget),
	}
	for k, v := range s3.Env() {
		env[k] = v
	}

	// Three replicas at once on the empty database.
	reps := make([]replica, 3)
	for i := range reps {
		reps[i] = launchReplica(t, bin, t.TempDir(), env)
	}
	for i := range reps {
		reps[i].wait(t)
	}
	t.Run("all three migrated", func(t *testing.T) {
		for i, r := range reps {
			for line := range strings.Lines(r.stderr.String()) {
				if strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN") {
					t.Errorf("replica %d logged: %s", i+1, line)
				}
			}
		}
		if out, err := exec.Command(bin, "migrate", "--database-url", reference).CombinedOutput(); err != nil {
			t.Fatalf("migrate the reference database: %v\n%s", err, out)
		}
		if got, want := dbtest.Schema(t, dbURL), dbtest.Schema(t, reference); got != want {
			t.Errorf("schema after three replicas started at once differs from one migration's:\n got %s\nwant %s", got, want)
		}
	})
	if out, err := exec.Command(bin, "seed", "--demo", "--database-url", dbURL).CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	token := func() (jwt, id string) {
		t.Helper()
		cmd := exec.Command(bin, "token", "create", "--configurator", "1", "--database-url", dbURL)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("token create: %v\n%s", err, stderr.String())
		}
		m := createdRE.FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("token create said %q", stderr.String())
		}
		return strings.TrimSpace(stdout.String()), m[1]
	}

	front := startHAProxy(t, haproxy, reps)
	// Every replica, then the balancer: what a client may reach.
	everyone := append([]string{}, front)
	for _, r := range reps {
		everyone = append(everyone, r.base)
	}
	if status, _, body := fetch(t, front+"/healthz", ""); status != http.StatusOK {
		t.Fatalf("GET /healthz through the balancer = %d %s", status, body)
	}
	if status, _, _ := fetch(t, front+"/metrics", ""); status != http.StatusNotFound {
		t.Errorf("GET /metrics through the balancer = %d; want 404 (the example keeps it internal)", status)
	}

	t.Run("an order with files through one, read through the others", func(t *testing.T) {
		tok, _ := token()
		snap, printMap := testkit.PNG(30, 20, 1), testkit.PNG(40, 10, 2)
		var order struct {
			ID                   int
			ConfiguratorSnapshot string   `json:"configurator_snapshot"`
			ConfiguratorPrintMap []string `json:"configurator_print_map"`
		}
		status := postForm(t, reps[0].base+"/api/open-api/v1/orders", tok, map[string]string{
			"price": "249.90", "configurator_id": "1", "customer_details": `{"name": "Ada"}`, "configurator_summary": `{}`,
		}, map[string][]byte{"configurator_snapshot": snap, "configurator_print_map": printMap}, &order)
		if status != http.StatusCreated || len(order.ConfiguratorPrintMap) != 1 || !strings.HasPrefix(order.ConfiguratorSnapshot, public+"/files/") {
			t.Fatalf("POST /orders through replica 1 = %d %+v; want 201 with files under %s/files/", status, order, public)
		}
		for _, base := range everyone {
			status, _, body := fetch(t, fmt.Sprintf("%s/api/open-api/v1/orders/%d", base, order.ID), tok)
			var again struct {
				ConfiguratorSnapshot string   `json:"configurator_snapshot"`
				ConfiguratorPrintMap []string `json:"configurator_print_map"`
			}
			json.Unmarshal(body, &again)
			if status != http.StatusOK || again.ConfiguratorSnapshot != order.ConfiguratorSnapshot || fmt.Sprint(again.ConfiguratorPrintMap) != fmt.Sprint(order.ConfiguratorPrintMap) {
				t.Errorf("GET /orders/%d through %s = %d %s; want its files", order.ID, base, status, body)
			}
			for file, data := range map[string][]byte{order.ConfiguratorSnapshot: snap, order.ConfiguratorPrintMap[0]: printMap} {
				url := base + strings.TrimPrefix(file, public)
				if status, ctype, got := fetch(t, url, ""); status != http.StatusOK || ctype != "image/png" || !bytes.Equal(got, data) {
					t.Errorf("GET %s = %d %s, %d bytes; want the uploaded PNG", url, status, ctype, len(got))
				}
			}
		}
	})

	t.Run("a subscription on one replica hears a write through another within a second", func(t *testing.T) {
		tok, _ := token()
		testSubscriptionAcross(t, reps[0].base, reps[1].base, tok)
	})

	t.Run("share links through any", func(t *testing.T) {
		tok, _ := token()
		var share struct {
			Success bool
			Data    string
		}
		// Any variation of the first option will do.
		status, _, body := fetch(t, reps[0].base+"/api/open-api/v1/configurator-options?per_page=-1", tok)
		var opts []struct {
			ID            int
			ParameterList []struct{ ID int } `json:"parameter_list"`
		}
		if err := json.Unmarshal(body, &opts); status != http.StatusOK || err != nil || len(opts) == 0 || len(opts[0].ParameterList) == 0 {
			t.Fatalf("GET /configurator-options = %d %.300s (%v); want the demo's options", status, body, err)
		}
		options := fmt.Sprintf(`{"%d": {"id": %d}}`, opts[0].ID, opts[0].ParameterList[0].ID)
		if status := postForm(t, reps[1].base+"/api/open-api/v1/configurator-options/set/new-options", tok,
			map[string]string{"options": options}, nil, &share); status != http.StatusOK || !share.Success || !strings.HasPrefix(share.Data, public+"/share/") {
			t.Fatalf("POST new-options through replica 2 = %d %+v; want a link under %s/share/", status, share, public)
		}
		for _, base := range everyone {
			url := base + strings.TrimPrefix(share.Data, public)
			if status, ctype, page := fetch(t, url, ""); status != http.StatusOK || !strings.HasPrefix(ctype, "text/html") || !bytes.Contains(page, []byte("Oslo Lounge Chair")) {
				t.Errorf("GET %s = %d %s; want the shared configurator's page", url, status, ctype)
			}
		}
	})

	t.Run("an idempotent retry through another replays", func(t *testing.T) {
		client := &http.Client{Timeout: 30 * time.Second}
		for _, tr := range []struct {
			name    string
			req     func(o orderReq, base, tok, key string) *http.Request
			created int
		}{
			{"rest", func(o orderReq, base, tok, key string) *http.Request { return o.rest(base, tok, key) }, http.StatusCreated},
			{"graphql", func(o orderReq, base, tok, key string) *http.Request { return o.graphql(base, tok, key) }, http.StatusOK},
		} {
			// Each write costs 11 units, replays too: a token for each.
			tok, _ := token()
			key := "replicas-" + tr.name
			order := orderReq{configurator: 1, price: "19.5", details: `{"key":"` + key + `"}`, snapshot: testkit.PNG(8, 8, uint8(3))}
			first := send(t, client, tr.req(order, reps[0].base, tok, key))
			if first.status != tr.created || first.id == 0 {
				t.Fatalf("%s: first request through replica 1: %d %s", tr.name, first.status, first.body)
			}
			for _, base := range everyone[1:] {
				if base == reps[0].base {
					continue
				}
				retry := send(t, client, tr.req(order, base, tok, key))
				if retry.status != first.status || retry.id != first.id || retry.header.Get(idempotency.ReplayedHeader) != "true" {
					t.Errorf("%s: retry through %s: %d %s, %s=%q; want order %d replayed", tr.name, base, retry.status, retry.body,
						idempotency.ReplayedHeader, retry.header.Get(idempotency.ReplayedHeader), first.id)
				}
			}
			if retry := send(t, client, tr.req(order, front, tok, key)); retry.id != first.id || retry.header.Get(idempotency.ReplayedHeader) != "true" {
				t.Errorf("%s: retry through the balancer: %d %s; want order %d replayed", tr.name, retry.status, retry.body, first.id)
			}
			if ids := ordersByKey(t, dbURL)[key]; len(ids) != 1 {
				t.Errorf("%s: orders under %s: %v; want one", tr.name, key, ids)
			}
		}
	})

	t.Run("a token revoked with the CLI is refused by every replica within a second", func(t *testing.T) {
		tok, id := token()
		for _, r := range reps {
			for range 2 { // the second answer comes from the replica's cache
				if status := viewerStatus(t, r.base, tok); status != http.StatusOK {
					t.Fatalf("%s with a fresh token: %d", r.base, status)
				}
			}
		}
		if out, err := exec.Command(bin, "token", "revoke", id, "--database-url", dbURL).CombinedOutput(); err != nil {
			t.Fatalf("token revoke %s: %v\n%s", id, err, out)
		}
		revoked := time.Now()
		var wg sync.WaitGroup
		for _, r := range reps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					status := viewerStatus(t, r.base, tok)
					if status == http.StatusUnauthorized {
						if d := time.Since(revoked); d > time.Second {
							t.Errorf("%s refused the revoked token %s after the revocation; want within a second", r.base, d)
						}
						return
					}
					if time.Since(revoked) > 10*time.Second {
						t.Errorf("%s still answers %d to a token revoked 10 s ago", r.base, status)
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
		}
		wg.Wait()
	})

	t.Run("one rate budget, whichever replica answers", func(t *testing.T) {
		tok, _ := token()
		before := make([]float64, len(reps))
		for i, r := range reps {
			before[i] = ordersRead(scrape(t, r.base))
		}
		start, allowed, refused := time.Now(), 0, false
		for range 3 * budget {
			status, _ := apiGet(t, front, tok)
			if status == http.StatusTooManyRequests {
				refused = true
				break
			}
			if status != http.StatusOK {
				t.Fatalf("GET /orders through the balancer: %d", status)
			}
			allowed++
		}
		// A unit comes back every 0.5 s while the requests run.
		refills := int(time.Since(start)/(time.Minute/budget)) + 1
		if !refused || allowed < budget || allowed > budget+refills {
			t.Errorf("through the balancer, %d requests passed (refused: %v); want the one budget of %d (+%d refilled), then 429, not one budget per replica",
				allowed, refused, budget, refills)
		}
		// Each replica is asked at once, before anything slower (the
		// scrapes below), so that no unit comes back in between.
		for i, r := range reps {
			if status, h := apiGet(t, r.base, tok); status != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
				t.Errorf("replica %d directly, after the budget was spent through the balancer: %d; want 429 with Retry-After", i+1, status)
			}
		}
		for i, r := range reps {
			if served := ordersRead(scrape(t, r.base)) - before[i]; served < 1 {
				t.Errorf("replica %d served none of the requests through the balancer: it did not spread them", i+1)
			}
		}
	})

	t.Run("the guide shows the configuration the test runs", func(t *testing.T) {
		cfg, err := os.ReadFile(haproxyConfig)
		if err != nil {
			t.Fatal(err)
		}
		guide, err := os.ReadFile("../../docs/deploy.md")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(guide, []byte("```haproxy\n"+string(cfg)+"```\n")) {
			t.Errorf("docs/deploy.md does not show %s as it is, in a haproxy code block", haproxyConfig)
		}
	})
}

// ordersRead is how many GET /api/open-api/v1/orders a replica answered 200.
func ordersRead(metrics map[string]float64) float64 {
	return metrics[`http_requests_total{method="GET",route="/api/open-api/v1/orders",status="200"}`]
}

// createDatabase creates database name in the cluster at clusterURL (the
// URL of its database postgres) and returns its URL.
func createDatabase(t *testing.T, clusterURL, name string) string {
	t.Helper()
	db, _, err := database.OpenSQL(clusterURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	return strings.Replace(clusterURL, "/postgres?", "/"+name+"?", 1)
}

// haproxyBinary returns the path of haproxy, skipping the test when it is
// missing, or failing it under CI=true, where .ci/run installs it.
func haproxyBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	testkit.Missing(t, "haproxy", "apt-get install haproxy")
	return ""
}

// startHAProxy runs haproxy in the foreground with the guide's
// configuration (haproxyConfig), listening on a free port in front of
// reps, and returns its base URL once it passes a request on; it is
// stopped when the test ends. Only the bind address and the server lines
// are replaced: everything else is the file's.
func startHAProxy(t *testing.T, bin string, reps []replica) string {
	t.Helper()
	addr := testkit.FreeAddr(t)
	src, err := os.ReadFile(haproxyConfig)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	binds, servers := 0, 0
	for line := range strings.Lines(string(src)) {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "bind":
			binds++
			line = "    bind " + addr + "\n"
		case len(f) >= 3 && f[0] == "server":
			if servers++; servers > 1 {
				continue
			}
			line = ""
			for i, r := range reps {
				line += fmt.Sprintf("    server replica%d %s %s\n", i+1, strings.TrimPrefix(r.base, "http://"), strings.Join(f[3:], " "))
			}
		}
		out = append(out, line)
	}
	if binds != 1 || servers == 0 {
		t.Fatalf("%s has %d bind lines and %d server lines; the test replaces one bind line and the server lines", haproxyConfig, binds, servers)
	}
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(strings.Join(out, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	logs := startLogged(t, exec.Command(bin, "-db", "-f", path), "haproxy")
	base := "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			if res, err := http.Get(base + "/healthz"); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					return base
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy on %s passed no request on:\n%s", addr, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
