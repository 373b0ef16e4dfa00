package rest

import (
	"net/http"
	"net/url"
	"strings"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/go-chi/chi/v5"

	"github.com/configurator/catalogue/graph/scalar"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// params is the query string of one request, read strictly for the
// parameters its operation takes: values become typed arguments, never
// text passed on; a parameter given twice is a fault, as is one the
// operation refuses by name; any other parameter is ignored. Its readers
// collect every fault (err), in the order the handler reads them, which is
// the document's, so that a client learns of all of them at once.
type params struct {
	names []string
	// vals holds the value of names[i] at i.
	vals []queryValue
	errs apperr.List
}

// queryValue is the first value of a query parameter and how many times
// the parameter came.
type queryValue struct {
	s string
	n int
}

// refusal is a query parameter an operation refuses, and why: a looser
// interface than v1 takes it, and ignoring it would answer another list
// than the client asked for.
type refusal struct{ name, reason string }

// readQuery scans r's query string as url.ParseQuery does (pairs split at
// &, names and values unescaped, the whole string refused for one bad
// escape or a semicolon), keeping only names and the refused ones (faults at once, in the order
// given); it makes no map, as this runs on every request.
func readQuery(r *http.Request, refused []refusal, names ...string) (*params, error) {
	q := &params{names: names, vals: make([]queryValue, len(names))}
	seen := make([]bool, len(refused))
	for raw := r.URL.RawQuery; raw != ""; {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			return nil, apperr.E(apperr.Invalid, "the query string is malformed: invalid semicolon separator in query")
		}
		if pair == "" {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(key)
		if err == nil {
			value, err = url.QueryUnescape(value)
		}
		if err != nil {
			return nil, apperr.E(apperr.Invalid, "the query string is malformed: %s", valid.Clip(err.Error()))
		}
		for i, name := range names {
			if name == key {
				if q.vals[i].n == 0 {
					q.vals[i].s = value
				}
				q.vals[i].n++
			}
		}
		for j, p := range refused {
			seen[j] = seen[j] || p.name == key
		}
	}
	for j, p := range refused {
		if seen[j] {
			q.errs = append(q.errs, apperr.Field(p.name, "%s", p.reason))
		}
	}
	return q, nil
}

// value returns the one value of name, false when it is absent or (a
// fault) given more than once.
func (q *params) value(name string) (string, bool) {
	for i, n := range q.names {
		if n != name {
			continue
		}
		switch v := q.vals[i]; {
		case v.n == 0:
			return "", false
		case v.n > 1:
			q.errs = append(q.errs, apperr.Field(name, "{} is given %d times; give it once", v.n))
			return "", false
		default:
			return v.s, true
		}
	}
	panic("rest: the operation does not read the parameter " + name)
}

// fault notes the faults of err.
func (q *params) fault(err error) { q.errs = append(q.errs, apperr.Errors(err)...) }

// read reads name with parse (one of valid's readers, whose faults name
// the field), nil when absent or malformed.
func read[T any](q *params, name string, parse func(field, s string) (T, error)) *T {
	s, ok := q.value(name)
	if !ok {
		return nil
	}
	v, err := parse(name, s)
	if err != nil {
		q.fault(err)
		return nil
	}
	return &v
}

// int reads a 32-bit integer (valid.Int), nil when absent.
func (q *params) int(name string) *int {
	return read(q, name, func(field, s string) (int, error) { return valid.Int(field, s, 32) })
}

// id reads an id (valid.ID: 1 or more), nil when absent.
func (q *params) id(name string) *int { return read(q, name, valid.ID) }

// requiredID reads an id the operation cannot do without.
func (q *params) requiredID(name string) int {
	for i, n := range q.names {
		if n == name && q.vals[i].n == 0 {
			q.errs = append(q.errs, apperr.Field(name, "{} is required"))
			return 0
		}
	}
	if n := q.id(name); n != nil {
		return *n
	}
	return 0
}

// date reads a day (valid.Date), nil when absent.
func (q *params) date(name string) *scalar.Date {
	return read(q, name, func(field, s string) (scalar.Date, error) {
		t, err := valid.Date(field, s)
		return scalar.Date{Time: t}, err
	})
}

// direction reads the sort direction "order", asc or desc in any case,
// as entgql reads it.
func (q *params) direction() *entgql.OrderDirection {
	return read(q, "order", func(field, s string) (entgql.OrderDirection, error) {
		switch strings.ToLower(s) {
		case "asc":
			return entgql.OrderDirectionAsc, nil
		case "desc":
			return entgql.OrderDirectionDesc, nil
		}
		return "", apperr.Field(field, "{} must be asc or desc, got %q", valid.Clip(s))
	})
}

// err returns the faults the readers found, or nil.
func (q *params) err() error { return q.errs.Err() }

// sorts are the values of one of ent's order-field enums (the columns a
// list sorts by) by their REST name, the GraphQL name in lower case, as
// openapi.json lists them in order_by (a test holds the two together).
type sorts[F any] struct {
	list   string
	values map[string]*F
}

// sortsOf reads each of names as a value of the enum F, at start.
func sortsOf[F any, P interface {
	*F
	graphql.Unmarshaler
}](names ...string) sorts[F] {
	s := sorts[F]{list: strings.Join(names, ", "), values: map[string]*F{}}
	for _, name := range names {
		v := P(new(F))
		if err := v.UnmarshalGQL(strings.ToUpper(name)); err != nil {
			panic("rest: order_by " + name + ": " + err.Error())
		}
		s.values[name] = (*F)(v)
	}
	return s
}

// sortBy reads order_by as one of s, nil when absent.
func sortBy[F any](q *params, s sorts[F]) *F {
	return read(q, "order_by", func(field, v string) (F, error) {
		f, ok := s.values[v]
		if !ok {
			var zero F
			return zero, apperr.Field(field, "{} must be one of %s, got %q", s.list, valid.Clip(v))
		}
		return *f, nil
	})
}

// pathID reads the path parameter {id}.
func pathID(r *http.Request) (int, error) {
	return valid.ID("id", chi.URLParam(r, "id"))
}
