package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/testkit"
)

// TestRedisRateLimits runs the binary with its rate limits in a Redis the
// test owns, and takes Redis away: the budget is kept in Redis; with Redis
// killed the service keeps serving, unmetered (fail-open), stays ready
// while /readyz says Redis is unreachable, logs the outage once and counts
// the unmetered requests in /metrics; once Redis is back the requests are
// metered again. A replica started while Redis is down serves too.
func TestRedisRateLimits(t *testing.T) {
	srv := testkit.StartRedis(t)
	const budget = 20
	env := map[string]string{
		"DATABASE_URL": dbtest.SQLite(t), "DEMO": "true",
		"REDIS_URL": srv.URL(), "RATE_LIMIT_PER_MINUTE": strconv.Itoa(budget),
	}
	p := startBinary(t, env)
	if got := readyz(t, p.base); got["status"] != "ok" || got["redis"] != "ok" {
		t.Errorf("/readyz = %v; want ok with redis ok", got)
	}
	if !strings.Contains(p.stderr.String(), "rate_limits="+srv.URL()) {
		t.Errorf("the start's log does not name the limiter's Redis:\n%s", p.stderr.String())
	}

	// The budget is spent in Redis: one key, then 429. A unit refills
	// every 3 s, so a slow machine may see a request or two more pass.
	allowed, refused := 0, false
	for range budget + 10 {
		status, h := apiGet(t, p.base, p.token)
		if status == http.StatusTooManyRequests {
			refused = true
			break
		}
		if status != http.StatusOK || h.Get("RateLimit-Limit") != strconv.Itoa(budget) {
			t.Fatalf("request %d: %d %v; want 200 with the budget's headers", allowed+1, status, h)
		}
		allowed++
	}
	if !refused || allowed < budget {
		t.Fatalf("%d requests allowed, refused %v; want the budget of %d, then 429", allowed, refused, budget)
	}
	if n := srv.Do(t, "DBSIZE"); n != "1" {
		t.Errorf("Redis holds %s keys; want the token's budget", n)
	}

	// Redis killed: requests pass, unmetered, and the replica stays ready.
	srv.Kill()
	const during = 10
	for i := range during {
		status, h := apiGet(t, p.base, p.token)
		if status != http.StatusOK || h.Get("RateLimit-Limit") != "" {
			t.Fatalf("request %d with Redis down: %d %v; want 200 without RateLimit headers (fail-open)", i+1, status, h)
		}
	}
	if got := readyz(t, p.base); got["http"] != "200" || got["status"] != "ok" || got["database"] != "ok" || got["redis"] != "unreachable" {
		t.Errorf("/readyz with Redis down = %v; want 200, ok, with redis unreachable", got)
	}
	if n := strings.Count(p.stderr.String(), "Redis is unreachable"); n != 1 {
		t.Errorf("the outage was logged %d times; want once:\n%s", n, tail(p.stderr.String(), 3000))
	}
	m := scrape(t, p.base)
	if m["ratelimit_redis_up"] != 0 || m["ratelimit_unmetered_total"] != during || m["ratelimit_redis_failures_total"] < during+1 {
		t.Errorf("metrics with Redis down: up %v, unmetered %v, failures %v; want 0, %d, more than %d",
			m["ratelimit_redis_up"], m["ratelimit_unmetered_total"], m["ratelimit_redis_failures_total"], during, during)
	}

	// Back (empty: a killed Redis keeps nothing): metered again within
	// the probe interval.
	srv.Start()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, h := apiGet(t, p.base, p.token)
		if status == http.StatusOK && h.Get("RateLimit-Remaining") == strconv.Itoa(budget-1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after Redis came back: %d %v; want metered again, from a whole budget", status, h)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := readyz(t, p.base); got["redis"] != "ok" {
		t.Errorf("/readyz with Redis back = %v; want redis ok", got)
	}
	if !strings.Contains(p.stderr.String(), "Redis answers again") {
		t.Errorf("the end of the outage was not logged:\n%s", tail(p.stderr.String(), 3000))
	}
	if m := scrape(t, p.base); m["ratelimit_redis_up"] != 1 {
		t.Errorf("ratelimit_redis_up = %v with Redis back; want 1", m["ratelimit_redis_up"])
	}

	t.Run("Redis down at start", func(t *testing.T) {
		srv.Kill()
		env := map[string]string{"DATABASE_URL": dbtest.SQLite(t), "DEMO": "true", "REDIS_URL": srv.URL()}
		p := startBinary(t, env)
		if status, h := apiGet(t, p.base, p.token); status != http.StatusOK || h.Get("RateLimit-Limit") != "" {
			t.Errorf("a request: %d %v; want 200, unmetered", status, h)
		}
		if got := readyz(t, p.base); got["status"] != "ok" || got["redis"] != "unreachable" {
			t.Errorf("/readyz = %v; want ok with redis unreachable", got)
		}
	})
}

// apiGet reads a page of orders with token and returns the status and the
// headers.
func apiGet(t *testing.T, base, token string) (int, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/open-api/v1/orders?per_page=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header
}

// readyz returns /readyz's answer (whatever its status).
func readyz(t *testing.T, base string) map[string]string {
	t.Helper()
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]string
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	body["http"] = strconv.Itoa(res.StatusCode)
	return body
}

var sampleRE = regexp.MustCompile(`(?m)^([a-z_]+)(\{[^}]*\})? (\S+)$`)

// scrape reads /metrics into a map from series (name and labels as
// written) to value; series without labels are under their name alone.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := map[string]float64{}
	for _, m := range sampleRE.FindAllStringSubmatch(string(b), -1) {
		v, err := strconv.ParseFloat(m[3], 64)
		if err == nil {
			out[m[1]+m[2]] = v
		}
	}
	return out
}
