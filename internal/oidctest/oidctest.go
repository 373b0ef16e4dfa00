// Package oidctest starts a real OpenID provider for tests: oidc-provider
// (npm, pinned in package-lock.json) run by Node from provider.mjs beside
// this file. It issues JWT access tokens (RFC 9068) through the client
// credentials grant and rotates its keys on request.
package oidctest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/testkit"
)

// Audience is the resource indicator the provider's tokens are for when a
// request names none.
const Audience = "https://catalogue.test"

// Client is a client of the provider: its tokens carry Claims, are
// signed with Alg (RS256, ES256 or EdDSA; RS256 when empty) and live TTL
// (5 minutes when zero; whole seconds).
type Client struct {
	Claims map[string]any `json:"claims,omitempty"`
	Alg    string         `json:"alg,omitempty"`
	TTL    time.Duration  `json:"-"`
}

// Provider is a running provider.
type Provider struct {
	// Issuer is its issuer URL, http://127.0.0.1:PORT.
	Issuer string
}

// dir is the directory of provider.mjs.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Start runs a provider with clients (by client id; each secret is the
// id) until the test ends. Without Node or the npm packages (npm ci in
// internal/oidctest) the test is skipped, except in CI (CI=true), which
// must install them.
func Start(t testing.TB, clients map[string]Client) *Provider {
	t.Helper()
	cmd := exec.Command(findNode(t), "provider.mjs")
	cmd.Dir = dir()
	cmd.Env = append(os.Environ(), "OIDCTEST_AUDIENCE="+Audience, "OIDCTEST_CLIENTS="+clientsJSON(t, clients))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m struct{ Issuer string }
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.Issuer != "" {
				ready <- m.Issuer
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case iss := <-ready:
		return &Provider{Issuer: iss}
	case <-time.After(60 * time.Second):
		t.Fatalf("the OpenID provider did not start within 60 s: %s", stderr.String())
	}
	return nil
}

// findNode returns the path of node, with oidc-provider installed beside
// this package; without them the test is skipped, or fails on CI.
func findNode(t testing.TB) string {
	t.Helper()
	const install = "install Node (>= 20.19) and run npm ci in internal/oidctest"
	node, err := exec.LookPath("node")
	if err != nil {
		testkit.Missing(t, "node", install)
	}
	if _, err := os.Stat(filepath.Join(dir(), "node_modules", "oidc-provider")); err != nil {
		testkit.Missing(t, "oidc-provider", install)
	}
	return node
}

// clientsJSON is clients as provider.mjs reads them, lifetimes in seconds.
func clientsJSON(t testing.TB, clients map[string]Client) string {
	type wire struct {
		Client
		TTL int `json:"ttl,omitempty"`
	}
	cs := map[string]wire{}
	for id, c := range clients {
		cs[id] = wire{Client: c, TTL: int(c.TTL / time.Second)}
	}
	cfg, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	return string(cfg)
}

// Token returns an access token for client with scope (none when empty), for resource
// (Audience when empty), by the client credentials grant.
func (p *Provider) Token(t testing.TB, client, scope, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	if resource != "" {
		form.Set("resource", resource)
	}
	req, _ := http.NewRequest(http.MethodPost, p.Issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, client)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var r struct {
		AccessToken string `json:"access_token"`
	}
	body, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(body, &r); err != nil || r.AccessToken == "" {
		t.Fatalf("token for %s (%s): %d %s", client, scope, res.StatusCode, body)
	}
	return r.AccessToken
}

// Rotate adds a new key of every algorithm, which signs the tokens issued
// from then on (a new kid); the old keys stay published.
func (p *Provider) Rotate(t testing.TB) { p.post(t, "/rotate", nil) }

// Retire stops publishing every key but the newest of each algorithm, as
// a provider does some time after a rotation.
func (p *Provider) Retire(t testing.TB) { p.post(t, "/retire", nil) }

// Sign returns a JWT of claims signed by the provider's newest key of alg
// (RS256, ES256 or EdDSA), whose protected header is alg, that key's kid
// and header (which may replace the kid); nothing else is added, so that
// a test can send any header and claims the provider's keys sign.
func (p *Provider) Sign(t testing.TB, alg string, header, claims map[string]any) string {
	t.Helper()
	var r struct{ Token string }
	p.post(t, "/sign", map[string]any{"alg": alg, "header": header, "claims": claims}, &r)
	return r.Token
}

// post sends body (JSON) to path of the provider's test endpoints and
// decodes the answer into out, when given.
func (p *Provider) post(t testing.TB, path string, body any, out ...any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(p.Issuer+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d", path, res.StatusCode)
	}
	for _, o := range out {
		if err := json.NewDecoder(res.Body).Decode(o); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}
