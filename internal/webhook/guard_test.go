package webhook_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/webhook"
)

// TestGuardRefuses: at registration, a URL that is not https, or whose
// host is or resolves to a loopback, private, link-local or metadata
// address, is a validation error of its field; a public address passes.
// WEBHOOK_ALLOW_PRIVATE lifts both rules.
func TestGuardRefuses(t *testing.T) {
	ctx := context.Background()
	strict := &webhook.Guard{}
	for _, u := range []string{
		"https://127.0.0.1/hook",
		"https://127.9.9.9:8443/hook",
		"https://10.1.2.3/hook",
		"https://172.16.0.1/hook",
		"https://192.168.1.1/hook",
		"https://169.254.169.254/latest/meta-data/",
		"https://[::1]/hook",
		"https://[fd00::1]/hook",
		"https://[fe80::1]/hook",
		"https://[::ffff:127.0.0.1]/hook",
		"https://0.0.0.0/hook",
		"https://100.64.0.1/hook",
		"https://localhost/hook", // a name resolving to loopback
		"http://93.184.216.34/hook",
		"ftp://93.184.216.34/hook",
		"https://user:pw@93.184.216.34/hook",
		"/relative",
		"https://" + strings.Repeat("a", 3000) + ".example/",
	} {
		err := strict.CheckURL(ctx, "url", u)
		if err == nil {
			t.Errorf("CheckURL(%.60s) accepted it", u)
			continue
		}
		if errs := apperr.Errors(err); len(errs) != 1 || errs[0].Kind != apperr.Invalid || errs[0].Field != "url" {
			t.Errorf("CheckURL(%.60s) = %v; want one BAD_REQUEST of field url", u, err)
		}
	}
	if err := strict.CheckURL(ctx, "url", "https://localhost/hook"); err == nil || !strings.Contains(err.Error(), "resolves to") {
		t.Errorf("https://localhost/hook: %v; want a refusal saying what the name resolves to", err)
	}
	if err := strict.CheckURL(ctx, "url", "https://93.184.216.34/hook"); err != nil {
		t.Errorf("a public https address was refused: %v", err)
	}
	open := &webhook.Guard{AllowPrivate: true}
	for _, u := range []string{"http://127.0.0.1:8080/hook", "https://10.0.0.1/hook", "http://localhost/hook"} {
		if err := open.CheckURL(ctx, "url", u); err != nil {
			t.Errorf("with AllowPrivate, %s was refused: %v", u, err)
		}
	}
	if err := open.CheckURL(ctx, "url", "ftp://127.0.0.1/"); err == nil {
		t.Error("with AllowPrivate, ftp was accepted")
	}
}

// TestPublic: the address ranges a delivery may reach.
func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "93.184.216.34": true, "2606:4700::1111": true,
		"127.0.0.1": false, "10.0.0.1": false, "169.254.169.254": false, "::1": false,
		"fd00:ec2::254": false, "::ffff:10.0.0.1": false, "224.0.0.1": false, "198.18.0.1": false,
	} {
		if got := webhook.Public(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Public(%s) = %v; want %v", addr, got, want)
		}
	}
}

// TestDialerRefusesAfterResolution: at delivery the dialer checks the
// address it connects to, after DNS, so a name that resolves to
// loopback later (DNS rebinding) is refused too.
func TestDialerRefusesAfterResolution(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	client := &http.Client{Transport: &http.Transport{DialContext: (&webhook.Guard{}).Dialer().DialContext}}
	for _, u := range []string{srv.URL, "http://localhost:" + port} {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s through the guard's dialer succeeded", u)
		} else if !strings.Contains(err.Error(), "not a public address") {
			t.Errorf("GET %s: %v; want the guard's refusal", u, err)
		}
	}
	if hits != 0 {
		t.Errorf("the receiver on loopback was reached %d times", hits)
	}
	open := &http.Client{Transport: &http.Transport{DialContext: (&webhook.Guard{AllowPrivate: true}).Dialer().DialContext}}
	resp, err := open.Get(srv.URL)
	if err != nil {
		t.Fatalf("with AllowPrivate: %v", err)
	}
	resp.Body.Close()
}
