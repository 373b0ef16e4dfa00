// Package valid holds the rules for client input that both transports
// share: how ids, integers and dates are written, what a page is, and the
// bounds of each value. REST applies them to its query strings and bodies,
// GraphQL to its arguments (through its scalars and resolvers), so the two
// accept and refuse the same values with the same words. Every refusal is
// an apperr.Invalid error about a domain field.
package valid

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/configurator/catalogue/internal/apperr"
)

// plainInt reports whether s is a base-10 integer without sign noise,
// exponent or fraction: an optional minus and digits.
func plainInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Int reads field as a plain base-10 integer that fits in bits bits: 1.5,
// 1e3, +1, 0x10 and the empty string are refused, so that every client
// writes numbers one way.
func Int(field, s string, bits int) (int, error) {
	if !plainInt(s) {
		return 0, apperr.Field(field, "{} must be a base-10 integer, got %q", Clip(s))
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, apperr.Field(field, "{} is out of range, got %s", Clip(s))
	}
	return int(n), nil
}

// ID reads field as a record id: a plain base-10 integer of 1 or more. No
// record has a smaller id, so 0 or -1 is a malformed request (400), not a
// missing record (404), on both transports.
func ID(field, s string) (int, error) {
	n, err := Int(field, s, 64)
	if err == nil {
		err = Positive(field, n)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// Positive refuses an id below 1.
func Positive(field string, n int) error {
	if n < 1 {
		return apperr.Field(field, "{} must be a positive integer, got %d", n)
	}
	return nil
}

// Date reads field as a calendar date: YYYY-MM-DD, or an RFC 3339
// date-time, which is reduced to its UTC date. It returns midnight UTC of
// that date.
func Date(field, s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, apperr.Field(field, "{} must be a date YYYY-MM-DD (or an RFC 3339 date-time), got %q", Clip(s))
	}
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
}

// Days turns an inclusive range of whole UTC days into created_at bounds:
// from the start of start (>=) to the start of the day after end (<).
// Either may be nil. end before start is refused, naming end_date.
func Days(start, end *time.Time) (from, until *time.Time, err error) {
	if start != nil && end != nil && end.Before(*start) {
		return nil, nil, apperr.Field("end_date", "{} %s is before {start_date} %s",
			end.Format(time.DateOnly), start.Format(time.DateOnly))
	}
	if end != nil {
		next := end.AddDate(0, 0, 1)
		until = &next
	}
	return start, until, nil
}

// Page sizes of the page-based lists. The spec leaves them open; 15 is the
// default of the Laravel paginator whose envelope REST v1 reproduces.
const (
	DefaultPerPage = 15
	MaxPerPage     = 100
	// AllPages is the per_page value that asks for every record.
	AllPages = -1
	// AllPagesCeiling is what AllPages is priced at before it runs: the
	// rows GraphQL's complexity counts for perPage -1, and the rows REST
	// takes from the rate-limit budget before it knows the list's length
	// (settling by the rows returned). It bounds no answer: AllPages
	// returns every record, as the contract says.
	AllPagesCeiling = 1000
)

// Page validates page and per_page and fills in their defaults: page from
// 1, per_page 1 to MaxPerPage or AllPages.
func Page(page, perPage *int) (p, pp int, err error) { return checkPage(page, perPage, true) }

// BoundedPage is Page for the lists whose contract has no "every record"
// (webhookDeliveries), since they grow without bound: per_page 1 to
// MaxPerPage only.
func BoundedPage(page, perPage *int) (p, pp int, err error) { return checkPage(page, perPage, false) }

func checkPage(page, perPage *int, all bool) (p, pp int, err error) {
	p, pp = 1, DefaultPerPage
	if page != nil {
		p = *page
	}
	if perPage != nil {
		pp = *perPage
	}
	var errs apperr.List
	if p < 1 {
		errs = append(errs, apperr.Field("page", "{} must be 1 or more, got %d", p))
	}
	switch {
	case all && pp == AllPages:
	case all && (pp < 1 || pp > MaxPerPage):
		errs = append(errs, apperr.Field("per_page", "{} must be between 1 and %d, or %d for all records, got %d", MaxPerPage, AllPages, pp))
	case pp < 1 || pp > MaxPerPage:
		errs = append(errs, apperr.Field("per_page", "{} must be between 1 and %d, got %d", MaxPerPage, pp))
	}
	if len(errs) > 0 {
		return 0, 0, errs
	}
	return p, pp, nil
}

// Clip shortens client text quoted in a message, at a rune boundary, so a
// refusal never echoes a large input back.
func Clip(s string) string { return ClipTo(s, 40) }

// ClipTo shortens s to at most max bytes, at a rune boundary, marking the
// cut with "...". Logs clip every value with it (MaxLoggedBytes), since an
// error can quote the client's input whole (pgx's "unable to encode"
// prints the value it was given).
func ClipTo(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// MaxLoggedBytes bounds one value of a log line (an error, a path): a
// large input quoted by an error is written clipped, never whole.
const MaxLoggedBytes = 2048

// Storable reports whether s is text that both databases store and
// compare alike: valid UTF-8 without NUL characters. PostgreSQL refuses
// such text (a database error) where SQLite would store it or match no
// row, so writes (rule.ValidText) and filters (Text) refuse it first.
func Storable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// Text refuses field unless its value s is Storable.
func Text(field, s string) error {
	if !Storable(s) {
		return apperr.Field(field, "{} must be valid UTF-8 text without NUL characters")
	}
	return nil
}
