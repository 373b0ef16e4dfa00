package testkit

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/httpcache"
)

// strongETag is the form of the tags httpcache gives: 16 hex digits,
// quoted.
var strongETag = regexp.MustCompile(`^"[0-9a-f]{16}"$`)

// Revalidatable fails t unless h are the headers of a read its client may
// revalidate (a strong ETag, Cache-Control: private, no-cache, and Vary
// listing vary), and returns the ETag.
func Revalidatable(t testing.TB, what string, h http.Header, vary string) string {
	t.Helper()
	tag := h.Get("ETag")
	if got := strings.Join(h.Values("Vary"), ", "); !strongETag.MatchString(tag) || h.Get("Cache-Control") != httpcache.CacheControl || got != vary {
		t.Errorf("%s: ETag %q, Cache-Control %q, Vary %q; want a strong ETag, %s, and %s",
			what, tag, h.Get("Cache-Control"), got, httpcache.CacheControl, vary)
	}
	return tag
}

// NoStore fails t unless h are the headers of an answer that must be
// neither stored nor revalidated: no-store, without an ETag.
func NoStore(t testing.TB, what string, h http.Header) {
	t.Helper()
	if h.Get("Cache-Control") != "no-store" || h.Get("ETag") != "" {
		t.Errorf("%s: Cache-Control %q, ETag %q; want no-store and no ETag", what, h.Get("Cache-Control"), h.Get("ETag"))
	}
}
