package rest

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"entgo.io/contrib/entgql"
	"github.com/go-chi/chi/v5"

	"github.com/configurator/catalogue/graph/scalar"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// params reads the query string of one request strictly and collects every
// fault, so that a client learns of all of them at once. Parameters a list
// does not know are ignored; a known one given twice is a fault. Values
// are only ever turned into typed arguments (ints, dates, generated order
// fields), never passed on as text.
type params struct {
	q    url.Values
	errs apperr.List
	bad  error // the query string itself does not parse
}

func newParams(r *http.Request) *params {
	q, err := url.ParseQuery(r.URL.RawQuery)
	p := &params{q: q}
	if err != nil {
		p.bad = apperr.E(apperr.Invalid, "the query string is malformed: %s", valid.Clip(err.Error()))
	}
	return p
}

// err returns the faults found so far, nil when there are none.
func (p *params) err() error {
	if p.bad != nil {
		return p.bad
	}
	if len(p.errs) == 0 {
		return nil
	}
	return p.errs
}

func (p *params) fail(name, format string, args ...any) {
	p.errs = append(p.errs, apperr.Field(name, format, args...))
}

// one returns the value of name and whether it was given.
func (p *params) one(name string) (string, bool) {
	vs, ok := p.q[name]
	if !ok {
		return "", false
	}
	if len(vs) > 1 {
		p.fail(name, "{} is given %d times; give it once", len(vs))
		return "", false
	}
	return vs[0], true
}

// int reads an integer that fits in bits bits, or nil when absent.
func (p *params) int(name string, bits int) *int {
	s, ok := p.one(name)
	if !ok {
		return nil
	}
	n, err := valid.Int(name, s, bits)
	if err != nil {
		p.errs = append(p.errs, err.(*apperr.Error))
		return nil
	}
	return &n
}

// id reads a record id (valid.ID), or nil when absent.
func (p *params) id(name string) *int {
	s, ok := p.one(name)
	if !ok {
		return nil
	}
	n, err := valid.ID(name, s)
	if err != nil {
		p.errs = append(p.errs, err.(*apperr.Error))
		return nil
	}
	return &n
}

// page reads page and per_page. Their ranges (page from 1, per_page 1 to
// 100 or -1) are the resolver's to check, so that REST and GraphQL agree;
// here they only have to be 32-bit integers, as GraphQL Ints are.
func (p *params) page() (page, perPage *int) {
	return p.int("page", 32), p.int("per_page", 32)
}

// direction reads order: asc or desc, in any case.
func (p *params) direction() *entgql.OrderDirection {
	s, ok := p.one("order")
	if !ok {
		return nil
	}
	var d entgql.OrderDirection
	switch strings.ToLower(s) {
	case "asc":
		d = entgql.OrderDirectionAsc
	case "desc":
		d = entgql.OrderDirectionDesc
	default:
		p.fail("order", "{} must be asc or desc, got %q", valid.Clip(s))
		return nil
	}
	return &d
}

// date reads a date (valid.Date), or nil when absent.
func (p *params) date(name string) *scalar.Date {
	s, ok := p.one(name)
	if !ok {
		return nil
	}
	t, err := valid.Date(name, s)
	if err != nil {
		p.errs = append(p.errs, err.(*apperr.Error))
		return nil
	}
	return &scalar.Date{Time: t}
}

// require reports name as missing unless the query has it.
func (p *params) require(name string) {
	if _, ok := p.q[name]; !ok {
		p.fail(name, "{} is required")
	}
}

// unsupported refuses parameters that a looser description of the list
// mentions but the contract does not, with the hint of what to use.
func (p *params) unsupported(hints map[string]string) {
	names := make([]string, 0, len(hints))
	for name := range hints {
		if _, ok := p.q[name]; ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		p.fail(name, "%s", hints[name])
	}
}

// sortFields maps the order_by values of one resource to its generated
// entgql order fields; the REST name is the lower-cased enum name
// (CREATED_AT is created_at).
type sortFields[F fmt.Stringer] struct {
	byName map[string]F
	names  []string
}

// sortable builds the order_by table of a resource from its generated
// order fields, such as ent.OrderOrderFieldID.
func sortable[F fmt.Stringer](fields ...F) sortFields[F] {
	s := sortFields[F]{byName: map[string]F{}}
	for _, f := range fields {
		name := strings.ToLower(f.String())
		s.byName[name] = f
		s.names = append(s.names, name)
	}
	slices.Sort(s.names)
	return s
}

// sortBy reads order_by as one of fields, or the zero F (nil) when absent,
// which leaves the resolver's default order.
func sortBy[F fmt.Stringer](p *params, fields sortFields[F]) F {
	var zero F
	s, ok := p.one("order_by")
	if !ok {
		return zero
	}
	f, ok := fields.byName[s]
	if !ok {
		p.fail("order_by", "{} must be one of %s, got %q", strings.Join(fields.names, ", "), valid.Clip(s))
		return zero
	}
	return f
}

// pathID reads the {id} path parameter, a record id (valid.ID).
func pathID(r *http.Request) (int, error) {
	return valid.ID("id", chi.URLParam(r, "id"))
}
