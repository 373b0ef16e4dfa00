package webhook

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// Guard keeps webhook deliveries off the service's own networks (SSRF): an
// endpoint must be an https URL whose host is, and resolves to, public
// addresses only. It checks at registration (CheckURL) and again at every
// connection, after DNS resolution (Dialer), so that a name that later
// resolves to a private address is refused too. AllowPrivate (the
// WEBHOOK_ALLOW_PRIVATE setting, for local development and tests) lifts
// both rules: plain http and private addresses are then accepted.
type Guard struct {
	AllowPrivate bool
	// Resolver looks names up (nil: net.DefaultResolver).
	Resolver *net.Resolver
}

// blocked are the ranges the standard library's predicates do not cover:
// shared address space (carrier-grade NAT), IETF protocol assignments,
// benchmarking, reserved and NAT64 ranges.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
}

// Public reports whether a delivery may connect to addr: not loopback,
// private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (with the
// cloud metadata address 169.254.169.254), multicast, unspecified or
// reserved.
func Public(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() || addr.IsMulticast() ||
		addr.IsUnspecified() {
		return false
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// CheckURL refuses, as a validation error of field, a URL a webhook may
// not be sent to: not absolute https, longer than valid.MaxURL, with user
// information, or naming a host that is or resolves to a non-public
// address.
func (g *Guard) CheckURL(ctx context.Context, field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || len(raw) > valid.MaxURL || (u.Scheme != "https" && !(g.AllowPrivate && u.Scheme == "http")) {
		return apperr.Field(field, "{} must be an absolute https URL of at most %d bytes", valid.MaxURL)
	}
	if u.User != nil {
		return apperr.Field(field, "{} must not carry a user name or password")
	}
	if g.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	if addr, err := netip.ParseAddr(host); err == nil {
		if !Public(addr) {
			return apperr.Field(field, "{} must not point at a loopback, private, link-local or metadata address (%s)", addr)
		}
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := g.resolver().LookupNetIP(lctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return apperr.Field(field, "{} names a host that does not resolve (%s)", host)
	}
	for _, a := range addrs {
		if !Public(a) {
			return apperr.Field(field, "{} resolves to a loopback, private, link-local or metadata address (%s is %s)", host, a.Unmap())
		}
	}
	return nil
}

func (g *Guard) resolver() *net.Resolver {
	if g.Resolver != nil {
		return g.Resolver
	}
	return net.DefaultResolver
}

// Dialer returns the dialer of deliveries: it refuses, after resolution,
// to connect to an address that is not Public, unless AllowPrivate.
func (g *Guard) Dialer() *net.Dialer {
	d := &net.Dialer{Timeout: 5 * time.Second, Resolver: g.Resolver}
	if g.AllowPrivate {
		return d
	}
	d.Control = func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("webhook: refused to connect to %s: %w", address, err)
		}
		if !Public(ap.Addr()) {
			return fmt.Errorf("webhook: refused to connect to %s: not a public address", ap.Addr().Unmap())
		}
		return nil
	}
	return d
}
