package webhook

import (
	"cmp"
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

// DefaultMaxEndpoints is how many endpoints one owner may keep unless
// WEBHOOK_MAX_ENDPOINTS says otherwise: each endpoint multiplies every
// event into another outgoing POST, so an owner's count bounds what one
// write can make the service send.
const DefaultMaxEndpoints = 16

// special is one row of the table of addresses a delivery may not reach.
type special struct {
	prefix netip.Prefix
	name   string
	// embeds, when set, makes the row a form that carries IPv4
	// addresses in an IPv6 one: the address is refused when one of those
	// it embeds is, and allowed otherwise (nil: the whole range is
	// refused).
	embeds func(a [16]byte) []netip.Addr
}

// specials is the one table of the guard, read at registration and at
// connection alike: every range of IANA's IPv4 and IPv6 Special-Purpose
// Address Registries (refused whole, including the few anycast services
// marked globally reachable, which no webhook receiver lives on), IPv4
// multicast, the IPv6 space outside global unicast 2000::/3 (reserved by
// the IETF, with site-local fec0::/10 and multicast ff00::/8 in it), and
// the IPv6 forms that embed an IPv4 address. An address is judged by the
// longest prefix that contains it, so that ::1 is loopback although it
// lies in the IPv4-compatible ::/96, and a Teredo address is judged by
// its client although it lies in 2001::/23.
var specials = []special{
	{prefix: netip.MustParsePrefix("0.0.0.0/8"), name: "this network"},
	{prefix: netip.MustParsePrefix("10.0.0.0/8"), name: "private-use"},
	{prefix: netip.MustParsePrefix("100.64.0.0/10"), name: "shared address space"},
	{prefix: netip.MustParsePrefix("127.0.0.0/8"), name: "loopback"},
	{prefix: netip.MustParsePrefix("169.254.0.0/16"), name: "link-local (cloud metadata)"},
	{prefix: netip.MustParsePrefix("172.16.0.0/12"), name: "private-use"},
	{prefix: netip.MustParsePrefix("192.0.0.0/24"), name: "IETF protocol assignments"},
	{prefix: netip.MustParsePrefix("192.0.2.0/24"), name: "documentation (TEST-NET-1)"},
	{prefix: netip.MustParsePrefix("192.31.196.0/24"), name: "AS112-v4"},
	{prefix: netip.MustParsePrefix("192.52.193.0/24"), name: "AMT"},
	{prefix: netip.MustParsePrefix("192.88.99.0/24"), name: "deprecated 6to4 relay anycast"},
	{prefix: netip.MustParsePrefix("192.168.0.0/16"), name: "private-use"},
	{prefix: netip.MustParsePrefix("192.175.48.0/24"), name: "direct delegation AS112 service"},
	{prefix: netip.MustParsePrefix("198.18.0.0/15"), name: "benchmarking"},
	{prefix: netip.MustParsePrefix("198.51.100.0/24"), name: "documentation (TEST-NET-2)"},
	{prefix: netip.MustParsePrefix("203.0.113.0/24"), name: "documentation (TEST-NET-3)"},
	{prefix: netip.MustParsePrefix("224.0.0.0/4"), name: "multicast"},
	{prefix: netip.MustParsePrefix("240.0.0.0/4"), name: "reserved"},
	{prefix: netip.MustParsePrefix("255.255.255.255/32"), name: "limited broadcast"},

	{prefix: netip.MustParsePrefix("::/3"), name: "reserved by the IETF (not global unicast)"},
	{prefix: netip.MustParsePrefix("4000::/2"), name: "reserved by the IETF (not global unicast)"},
	{prefix: netip.MustParsePrefix("8000::/1"), name: "reserved by the IETF (not global unicast)"},
	{prefix: netip.MustParsePrefix("::/128"), name: "unspecified"},
	{prefix: netip.MustParsePrefix("::1/128"), name: "loopback"},
	{prefix: netip.MustParsePrefix("::/96"), name: "IPv4-compatible", embeds: last32},
	{prefix: netip.MustParsePrefix("::ffff:0:0/96"), name: "IPv4-mapped", embeds: last32},
	{prefix: netip.MustParsePrefix("::ffff:0:0:0/96"), name: "IPv4-translated", embeds: last32},
	{prefix: netip.MustParsePrefix("64:ff9b::/96"), name: "NAT64", embeds: last32},
	// The local-use NAT64 prefix puts its IPv4 address where each network
	// chooses (RFC 8215), so it is refused whole.
	{prefix: netip.MustParsePrefix("64:ff9b:1::/48"), name: "local-use IPv4/IPv6 translation"},
	{prefix: netip.MustParsePrefix("100::/64"), name: "discard-only"},
	{prefix: netip.MustParsePrefix("100:0:0:1::/64"), name: "dummy IPv6 prefix"},
	{prefix: netip.MustParsePrefix("2001::/23"), name: "IETF protocol assignments"},
	{prefix: netip.MustParsePrefix("2001::/32"), name: "Teredo", embeds: teredo},
	{prefix: netip.MustParsePrefix("2001:db8::/32"), name: "documentation"},
	{prefix: netip.MustParsePrefix("2002::/16"), name: "6to4", embeds: sixToFour},
	{prefix: netip.MustParsePrefix("2620:4f:8000::/48"), name: "direct delegation AS112 service"},
	{prefix: netip.MustParsePrefix("3fff::/20"), name: "documentation"},
	{prefix: netip.MustParsePrefix("5f00::/16"), name: "segment routing SIDs"},
	{prefix: netip.MustParsePrefix("fc00::/7"), name: "unique-local"},
	{prefix: netip.MustParsePrefix("fe80::/10"), name: "link-local"},
	{prefix: netip.MustParsePrefix("fec0::/10"), name: "site-local"},
	{prefix: netip.MustParsePrefix("ff00::/8"), name: "multicast"},
}

// last32 is the IPv4 address in the last 32 bits (IPv4-mapped,
// -compatible, -translated, NAT64 /96).
func last32(a [16]byte) []netip.Addr {
	return []netip.Addr{netip.AddrFrom4([4]byte(a[12:16]))}
}

// sixToFour is the IPv4 address of a 6to4 site, bits 16 to 47.
func sixToFour(a [16]byte) []netip.Addr {
	return []netip.Addr{netip.AddrFrom4([4]byte(a[2:6]))}
}

// teredo is the server's IPv4 address (bits 32 to 63) and the client's
// (the last 32 bits, inverted) of a Teredo address (RFC 4380).
func teredo(a [16]byte) []netip.Addr {
	c := [4]byte(a[12:16])
	for i := range c {
		c[i] ^= 0xff
	}
	return []netip.Addr{netip.AddrFrom4([4]byte(a[4:8])), netip.AddrFrom4(c)}
}

// lookup is the row of the longest prefix of specials that contains
// addr (nil: none does).
func lookup(addr netip.Addr) *special {
	var best *special
	for i := range specials {
		s := &specials[i]
		if s.prefix.Contains(addr) && (best == nil || s.prefix.Bits() > best.prefix.Bits()) {
			best = s
		}
	}
	return best
}

// Refusal says why a delivery may not connect to addr, such as
// "::10.0.0.1 embeds 10.0.0.1 (IPv4-compatible ::/96), in 10.0.0.0/8
// (private-use)"; it is empty for a public address.
func Refusal(addr netip.Addr) string {
	if !addr.IsValid() {
		return "not an IP address"
	}
	addr = addr.WithZone("") // a prefix never contains an address with a zone
	s := lookup(addr)
	switch {
	case s == nil:
		return ""
	case s.embeds == nil:
		return fmt.Sprintf("%s is in %s (%s)", addr, s.prefix, s.name)
	}
	for _, v4 := range s.embeds(addr.As16()) {
		if r := lookup(v4); r != nil {
			return fmt.Sprintf("%s embeds %s (%s %s), in %s (%s)", addr, v4, s.name, s.prefix, r.prefix, r.name)
		}
	}
	return ""
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
		if why := Refusal(addr); why != "" {
			return apperr.Field(field, "{} must point at a public address: %s", why)
		}
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := cmp.Or(g.Resolver, net.DefaultResolver).LookupNetIP(lctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return apperr.Field(field, "{} names a host that does not resolve (%s)", host)
	}
	for _, a := range addrs {
		if why := Refusal(a); why != "" {
			return apperr.Field(field, "{} resolves to an address that is not public (%s: %s)", host, why)
		}
	}
	return nil
}

// Dialer returns the dialer of deliveries: it refuses, after resolution,
// to connect to an address that Refusal refuses, unless AllowPrivate.
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
		if why := Refusal(ap.Addr()); why != "" {
			return fmt.Errorf("webhook: refused to connect to %s: not a public address: %s", ap.Addr(), why)
		}
		return nil
	}
	return d
}
