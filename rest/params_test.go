package rest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"entgo.io/contrib/entgql"
	"github.com/go-chi/chi/v5"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/apperr"
)

// parse runs read over the query string q and returns what it read and
// the name of the first parameter at fault ("" when none, "?" when the
// fault names none).
func parse(q string, read func(p *params) any) (any, string) {
	p := newParams(httptest.NewRequest("GET", "/x?"+q, nil))
	v := read(p)
	err := p.err()
	if err == nil {
		return v, ""
	}
	if es := apperr.Errors(err); len(es) > 0 && es[0].Field != "" {
		return v, es[0].Field
	}
	return v, "?"
}

func deref[T any](v *T) any {
	if v == nil {
		return nil
	}
	return *v
}

func TestParams(t *testing.T) {
	pageOf := func(p *params) any {
		page, perPage := p.page()
		return fmt.Sprint(deref(page), " ", deref(perPage))
	}
	intOf := func(p *params) any { return deref(p.id("category_id")) }
	dateOf := func(p *params) any {
		d := p.date("start_date")
		if d == nil {
			return nil
		}
		return d.Format(time.DateOnly)
	}
	dirOf := func(p *params) any { return deref(p.direction()) }
	sortOf := func(p *params) any {
		f := sortBy(p, orderSorts)
		if f == nil {
			return nil
		}
		return f.String()
	}
	for _, tc := range []struct {
		name    string
		query   string
		read    func(*params) any
		want    any
		wantErr string
	}{
		{"no page", "", pageOf, "<nil> <nil>", ""},
		{"page and per_page", "page=2&per_page=-1", pageOf, "2 -1", ""},
		{"leading zeros", "page=007", pageOf, "7 <nil>", ""},
		// Ranges are the resolver's: these parse.
		{"page 0 parses", "page=0", pageOf, "0 <nil>", ""},
		{"per_page 500 parses", "per_page=500", pageOf, "<nil> 500", ""},
		{"page word", "page=abc", pageOf, "<nil> <nil>", "page"},
		{"page fraction", "page=1.5", pageOf, "<nil> <nil>", "page"},
		{"page empty", "page=", pageOf, "<nil> <nil>", "page"},
		{"page exponent", "page=1e3", pageOf, "<nil> <nil>", "page"},
		{"page plus", "page=%2B2", pageOf, "<nil> <nil>", "page"},
		{"page spaces", "page=%202", pageOf, "<nil> <nil>", "page"},
		{"page hex", "page=0x10", pageOf, "<nil> <nil>", "page"},
		{"page beyond 32 bits", "page=2147483648", pageOf, "<nil> <nil>", "page"},
		{"page twice", "page=1&page=2", pageOf, "<nil> <nil>", "page"},
		{"per_page twice", "per_page=1&per_page=1", pageOf, "<nil> <nil>", "per_page"},
		{"per_page word", "per_page=all", pageOf, "<nil> <nil>", "per_page"},
		{"malformed query", "page=%zz", pageOf, "<nil> <nil>", "?"},
		{"id", "category_id=12", intOf, 12, ""},
		{"id big", "category_id=9007199254740993", intOf, 9007199254740993, ""},
		{"id zero", "category_id=0", intOf, nil, "category_id"},
		{"id negative", "category_id=-3", intOf, nil, "category_id"},
		{"id word", "category_id=wood", intOf, nil, "category_id"},
		{"id beyond 64 bits", "category_id=99999999999999999999", intOf, nil, "category_id"},
		{"date", "start_date=2026-03-01", dateOf, "2026-03-01", ""},
		{"date without zeros", "start_date=2026-3-1", dateOf, nil, "start_date"},
		{"date-time, reduced to its UTC date", "start_date=2026-03-01T23:30:00-02:00", dateOf, "2026-03-02", ""},
		{"date-time without zone", "start_date=2026-03-01T00:00:00", dateOf, nil, "start_date"},
		{"date impossible", "start_date=2026-02-30", dateOf, nil, "start_date"},
		{"date word", "start_date=yesterday", dateOf, nil, "start_date"},
		{"date empty", "start_date=", dateOf, nil, "start_date"},
		{"order asc", "order=asc", dirOf, entgql.OrderDirectionAsc, ""},
		{"order DESC", "order=DESC", dirOf, entgql.OrderDirectionDesc, ""},
		{"order Desc", "order=Desc", dirOf, entgql.OrderDirectionDesc, ""},
		{"order sideways", "order=up", dirOf, nil, "order"},
		{"order empty", "order=", dirOf, nil, "order"},
		{"order_by", "order_by=created_at", sortOf, "CREATED_AT", ""},
		{"order_by price", "order_by=price", sortOf, "PRICE", ""},
		{"order_by upper", "order_by=PRICE", sortOf, nil, "order_by"},
		{"order_by unknown", "order_by=name", sortOf, nil, "order_by"},
		{"order_by sql", "order_by=id%3Bdrop%20table%20orders", sortOf, nil, "order_by"},
		{"order_by empty", "order_by=", sortOf, nil, "order_by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errName := parse(tc.query, tc.read)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || errName != tc.wantErr {
				t.Errorf("parse(%q) = %v, fault %q; want %v, fault %q", tc.query, got, errName, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParamsCollectEveryFault(t *testing.T) {
	p := newParams(httptest.NewRequest("GET", "/x?page=a&order=b&order_by=c&limit=1&status=paid", nil))
	p.unsupported(orderLoose)
	p.page()
	p.direction()
	sortBy(p, orderSorts)
	var names []string
	for _, e := range p.errs {
		names = append(names, e.Field)
	}
	want := []string{"limit", "status", "page", "order", "order_by"}
	if !slices.Equal(names, want) {
		t.Errorf("faults = %v; want %v", names, want)
	}
	if !strings.Contains(p.errs[0].Error(), "page and per_page") {
		t.Errorf("limit fault = %q; want it to point at page and per_page", p.errs[0].Error())
	}
}

func TestOrderByMessageListsAllowedValues(t *testing.T) {
	p := newParams(httptest.NewRequest("GET", "/x?order_by=name", nil))
	sortBy(p, orderSorts)
	want := `order_by must be one of created_at, id, price, status, updated_at, got "name"`
	if len(p.errs) != 1 || p.errs[0].Error() != want {
		t.Errorf("faults = %v; want %q", p.errs, want)
	}
}

func TestPathID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"1", 1, true}, {"42", 42, true}, {"0", 0, false}, {"-1", 0, false}, {"abc", 0, false},
		{"1.0", 0, false}, {"1e2", 0, false}, {"", 0, false}, {"99999999999999999999", 0, false},
	} {
		r := httptest.NewRequest("GET", "/x", nil)
		rctx := chi.NewRouteContext()
		rctx.URLParams.Add("id", tc.in)
		r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx))
		got, err := pathID(r)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("pathID(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if es := apperr.Errors(err); err != nil && (len(es) == 0 || es[0].Field != "id") {
			t.Errorf("pathID(%q) error = %v; want a fault naming id", tc.in, err)
		}
	}
}

// TestSortTablesMatchSchema checks that every order_by table offers
// exactly the order fields the generated GraphQL schema has, so that a
// new sortable field reaches REST too.
func TestSortTablesMatchSchema(t *testing.T) {
	src, err := os.ReadFile("../graph/ent.graphql")
	if err != nil {
		t.Fatal(err)
	}
	for enum, names := range map[string][]string{
		"OrderOrderField":              orderSorts.names,
		"MaterialOrderField":           materialSorts.names,
		"MaterialCategoryOrderField":   materialCategorySorts.names,
		"TextureOrderField":            textureSorts.names,
		"FormFieldOrderField":          formFieldSorts.names,
		"ConfiguratorOptionOrderField": optionSorts.names,
	} {
		m := regexp.MustCompile(`(?s)enum ` + enum + ` \{(.*?)\}`).FindSubmatch(src)
		if m == nil {
			t.Errorf("enum %s not found in graph/ent.graphql", enum)
			continue
		}
		var want []string
		for _, v := range strings.Fields(string(m[1])) {
			want = append(want, strings.ToLower(v))
		}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("order_by values for %s = %v; want %v", enum, names, want)
		}
	}
	// Every name maps back to its generated field.
	for name, f := range orderSorts.byName {
		var g ent.OrderOrderField
		if err := g.UnmarshalGQL(strings.ToUpper(name)); err != nil || g.String() != f.String() {
			t.Errorf("order_by %s does not round-trip: %v", name, err)
		}
	}
}
