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
	forms := make([]string, len(issueForms))
	for i, a := range issueForms {
		forms[i] = "https://[" + a + "]/hook"
	}
	for _, u := range append(forms,
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
		"https://[fe80::1%25eth0]/hook",
		"https://[64:ff9b::a9fe:a9fe]/hook",
		"https://192.0.2.1/hook",
		"https://0.0.0.0/hook",
		"https://100.64.0.1/hook",
		"https://localhost/hook", // a name resolving to loopback
		"http://93.184.216.34/hook",
		"ftp://93.184.216.34/hook",
		"https://user:pw@93.184.216.34/hook",
		"/relative",
		"https://"+strings.Repeat("a", 3000)+".example/",
	) {
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
	for _, f := range forms {
		if err := strict.CheckURL(ctx, "url", f); err == nil || !strings.Contains(err.Error(), "must point at a public address") {
			t.Errorf("%s: %v; want a refusal naming the range", f, err)
		}
	}
	for _, u := range []string{"https://93.184.216.34/hook", "https://[2606:4700::1111]/hook", "https://[::ffff:8.8.8.8]/hook",
		"https://[2002:808:808::1]:8443/hook", "https://[64:ff9b::808:808]/hook"} {
		if err := strict.CheckURL(ctx, "url", u); err != nil {
			t.Errorf("a public https address was refused: %v", err)
		}
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

// issueForms are the IPv6 forms of loopback, private or reserved space
// that the guard once let through (issue 24).
var issueForms = []string{"::127.0.0.1", "::10.0.0.1", "::ffff:0:127.0.0.1", "2002:7f00:1::1", "fec0::1", "100::1", "2001:db8::1"}

// TestPublic: the address ranges a delivery may reach, as the one table
// judges them: every IANA special-purpose range is refused, and an IPv6
// form that embeds an IPv4 address is refused exactly when that address
// is.
func TestPublic(t *testing.T) {
	refused := append([]string{
		// IPv4 special-purpose registry, one address of each range.
		"0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "100.127.255.254", "127.0.0.1", "127.9.9.9", "169.254.169.254",
		"172.16.0.1", "172.31.255.255", "192.0.0.9", "192.0.0.170", "192.0.2.1", "192.31.196.1", "192.52.193.1",
		"192.88.99.1", "192.168.1.1", "192.175.48.1", "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9",
		"224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.254", "255.255.255.255",
		// IPv6 special-purpose registry and the space outside 2000::/3.
		"::", "::1", "100::", "100::ffff", "100:0:0:1::1", "2001:2::1", "2001:3::1", "2001:4:112::1", "2001:10::1", "2001:20::1",
		"2001:1ff::1", "2001:db8::1", "2001:db8:ffff::1", "2620:4f:8000::1", "3fff::1", "5f00::1", "fc00::1", "fd00:ec2::254",
		"fe80::1", "fe80::1%eth0", "fec0::1", "feff::1", "ff02::1", "ff0e::1", "400::1", "4000::1", "8000::1", "64:ff9b:1::a00:1",
		// IPv4 embedded: mapped, compatible, translated, NAT64, 6to4, Teredo (client inverted, and server).
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0.0.0.0",
		"::127.0.0.1", "::10.0.0.1", "::192.168.0.1", "::0.0.0.2",
		"::ffff:0:127.0.0.1", "::ffff:0:10.0.0.1", "::ffff:0:0.0.0.8",
		"64:ff9b::127.0.0.1", "64:ff9b::10.0.0.1", "64:ff9b::169.254.169.254",
		"2002:7f00:1::1", "2002:a00:1::1", "2002:a9fe:a9fe::1", "2002:c0a8:101::1",
		"2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo client 127.0.0.1 (inverted), server 65.54.227.120
		"2001:0:a00:1:8000:63bf:f7f7:f7f7",     // Teredo server 10.0.0.1, client 8.8.8.8
	}, issueForms...)
	allowed := []string{
		"8.8.8.8", "93.184.216.34", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.32.0.1", "192.0.1.1", "198.20.0.1",
		"223.255.255.255", "2606:4700::1111", "2a00:1450:4001::1", "2001:200::1", "2001:4860:4860::8888",
		"::ffff:8.8.8.8", "::8.8.8.8", "::ffff:0:1.1.1.1", "64:ff9b::8.8.8.8", "2002:808:808::1", "2002:5db8:d822::1",
		"2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo server 65.54.227.120, client 8.8.8.8
	}
	for _, a := range refused {
		addr := netip.MustParseAddr(a)
		if why := webhook.Refusal(addr); !strings.Contains(why, "/") {
			t.Errorf("Refusal(%s) = %q; want the range named", a, why)
		}
	}
	for _, a := range allowed {
		if why := webhook.Refusal(netip.MustParseAddr(a)); why != "" {
			t.Errorf("Refusal(%s) = %q; want none", a, why)
		}
	}
	if got, want := webhook.Refusal(netip.MustParseAddr("2002:7f00:1::1")), "2002:7f00:1::1 embeds 127.0.0.1 (6to4 2002::/16), in 127.0.0.0/8 (loopback)"; got != want {
		t.Errorf("Refusal(2002:7f00:1::1) = %q; want %q", got, want)
	}
	if webhook.Refusal(netip.Addr{}) == "" {
		t.Error("Refusal(the zero Addr) is empty")
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
	urls := []string{srv.URL, "http://localhost:" + port}
	for _, a := range issueForms {
		urls = append(urls, "http://["+a+"]:"+port)
	}
	for _, u := range urls {
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
	// Public addresses, embedded ones included, pass the check made
	// before each connection (the test cannot reach them).
	control := (&webhook.Guard{}).Dialer().Control
	for _, a := range []string{"93.184.216.34:443", "[2606:4700::1111]:443", "[::ffff:8.8.8.8]:443", "[2002:808:808::1]:443", "[64:ff9b::808:808]:443"} {
		if err := control("tcp", a, nil); err != nil {
			t.Errorf("the dialer refuses %s: %v", a, err)
		}
	}
	open := &http.Client{Transport: &http.Transport{DialContext: (&webhook.Guard{AllowPrivate: true}).Dialer().DialContext}}
	resp, err := open.Get(srv.URL)
	if err != nil {
		t.Fatalf("with AllowPrivate: %v", err)
	}
	resp.Body.Close()
}
