package rest

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/configurator/catalogue/internal/metrics"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/valid"
	"github.com/configurator/catalogue/internal/viewer"
)

// charge takes what the request costs from the token's budget, in one
// call of the limiter (ratelimit's units): a read costs ReadUnits, a list
// with per_page=-1 the rows of its ceiling (valid.AllPagesCeiling, 10
// units) whatever it returns, since its size is not known before it is
// read and the data layer does not bill, and a write WriteUnits more. Over
// budget is a RateLimited error (429, with Retry-After, counted in
// http_rate_limited_total); every answer carries the RateLimit-* headers.
func (h *handler) charge(w http.ResponseWriter, r *http.Request, v *viewer.Viewer) error {
	if h.limiter == nil {
		return nil
	}
	units := ratelimit.ReadUnits
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if allPages(r.URL.RawQuery) {
			units = ratelimit.RowUnits(valid.AllPagesCeiling)
		}
	default:
		units += ratelimit.WriteUnits
	}
	err := ratelimit.NewMeter(h.limiter, ratelimit.Key(v.TokenID), w.Header()).Charge(r.Context(), units)
	if err != nil {
		metrics.NoteRateLimited(r.Context())
	}
	return err
}

// allPages reports whether the query string asks for per_page=-1, as the
// list handlers will read it (valid.Int: -1, -01, ...). A request without
// per_page=- (or an escape) pays a substring search and nothing more.
func allPages(rawQuery string) bool {
	if !strings.Contains(rawQuery, "per_page=-") && !strings.ContainsAny(rawQuery, "%+") {
		return false // -1 unescaped starts with a minus
	}
	for q := rawQuery; q != ""; {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		k, v, _ := strings.Cut(pair, "=")
		if unescape(k) == "per_page" && isMinusOne(unescape(v)) {
			return true
		}
	}
	return false
}

// unescape decodes a query string component, without allocating when it
// holds no escape; a malformed one decodes to "".
func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	u, err := url.QueryUnescape(s)
	if err != nil {
		return ""
	}
	return u
}

// isMinusOne reports whether s is a base-10 integer equal to -1, as
// valid.Int reads it (leading zeros allowed).
func isMinusOne(s string) bool {
	digits, neg := strings.CutPrefix(s, "-")
	return neg && strings.TrimLeft(digits, "0") == "1"
}
