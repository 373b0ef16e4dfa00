package rest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/configurator/catalogue/graph/model"
	"github.com/configurator/catalogue/internal/apperr"
)

// faults names the fields of the faults in err ("?" for one naming none).
func faults(err error) string {
	var names []string
	for _, e := range apperr.Errors(err) {
		if e.Field == "" {
			names = append(names, "?")
		} else {
			names = append(names, e.Field)
		}
	}
	if err != nil && len(names) == 0 {
		return "?"
	}
	return strings.Join(names, " ")
}

// shown is *v, or nil.
func shown[T any](v *T) any {
	if v == nil {
		return nil
	}
	return *v
}

// TestOrderParams reads the order list's query strings as the document
// describes them: every value a parameter can take, the ones it cannot,
// and the faults named.
func TestOrderParams(t *testing.T) {
	show := func(a model.OrdersPageArgs) string {
		var conf any
		if a.Where != nil {
			conf = shown(a.Where.ConfiguratorID)
		}
		date := func(d any) any {
			if d, ok := d.(interface{ Format(string) string }); ok {
				return d.Format(time.DateOnly)
			}
			return d
		}
		var start, end any
		if a.StartDate != nil {
			start = date(a.StartDate.Time)
		}
		if a.EndDate != nil {
			end = date(a.EndDate.Time)
		}
		return strings.TrimSpace(fmt.Sprintln(shown(a.Page), shown(a.PerPage), shown(a.OrderBy), shown(a.Order), conf, start, end))
	}
	const none = "<nil> <nil> <nil> <nil> <nil> <nil> <nil>"
	for _, tc := range []struct {
		name, query, want, fault string
	}{
		{"nothing", "", none, ""},
		{"unknown parameters are ignored", "colour=red&pages=2", none, ""},
		{"every parameter", "page=2&per_page=-1&order_by=price&order=asc&configurator_id=3&start_date=2026-03-01&end_date=2026-03-02",
			"2 -1 PRICE ASC 3 2026-03-01 2026-03-02", ""},
		{"leading zeros", "page=007", "7 <nil> <nil> <nil> <nil> <nil> <nil>", ""},
		// Ranges are the resolver's (valid.Page), as on GraphQL: these read.
		{"page 0 reads", "page=0", "0 <nil> <nil> <nil> <nil> <nil> <nil>", ""},
		{"per_page 500 reads", "per_page=500", "<nil> 500 <nil> <nil> <nil> <nil> <nil>", ""},
		{"page word", "page=abc", none, "page"},
		{"page fraction", "page=1.5", none, "page"},
		{"page empty", "page=", none, "page"},
		{"page exponent", "page=1e3", none, "page"},
		{"page plus", "page=%2B2", none, "page"},
		{"page spaces", "page=%202", none, "page"},
		{"page hex", "page=0x10", none, "page"},
		{"page beyond 32 bits", "page=2147483648", none, "page"},
		{"page twice", "page=1&page=2", none, "page"},
		{"per_page twice", "per_page=1&per_page=1", none, "per_page"},
		{"per_page word", "per_page=all", none, "per_page"},
		{"malformed query", "page=%zz", none, "?"},
		{"id big", "configurator_id=9007199254740993", "<nil> <nil> <nil> <nil> 9007199254740993 <nil> <nil>", ""},
		{"id zero", "configurator_id=0", none, "configurator_id"},
		{"id negative", "configurator_id=-3", none, "configurator_id"},
		{"id word", "configurator_id=wood", none, "configurator_id"},
		{"id beyond 64 bits", "configurator_id=99999999999999999999", none, "configurator_id"},
		{"date without zeros", "start_date=2026-3-1", none, "start_date"},
		{"date-time, reduced to its UTC date", "start_date=2026-03-01T23:30:00-02:00", "<nil> <nil> <nil> <nil> <nil> 2026-03-02 <nil>", ""},
		{"date-time without zone", "start_date=2026-03-01T00:00:00", none, "start_date"},
		{"date impossible", "end_date=2026-02-30", none, "end_date"},
		{"date word", "start_date=yesterday", none, "start_date"},
		{"date empty", "start_date=", none, "start_date"},
		{"order DESC", "order=DESC", "<nil> <nil> <nil> DESC <nil> <nil> <nil>", ""},
		{"order Desc", "order=Desc", "<nil> <nil> <nil> DESC <nil> <nil> <nil>", ""},
		{"order sideways", "order=up", none, "order"},
		{"order empty", "order=", none, "order"},
		{"order_by created_at", "order_by=created_at", "<nil> <nil> CREATED_AT <nil> <nil> <nil> <nil>", ""},
		{"order_by upper", "order_by=PRICE", none, "order_by"},
		{"order_by unknown", "order_by=name", none, "order_by"},
		{"order_by sql", "order_by=id%3Bdrop%20table%20orders", none, "order_by"},
		{"order_by empty", "order_by=", none, "order_by"},
		{"refused by name", "limit=1", none, "limit"},
		{"every fault at once", "page=a&order=b&order_by=c&limit=1&status=paid", none, "limit status page order_by order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ordersArgs(httptest.NewRequest("GET", "/orders?"+tc.query, nil))
			if show(got) != tc.want && err == nil || faults(err) != tc.fault {
				t.Errorf("read(%q) = %s, faults %q; want %s, faults %q", tc.query, show(got), faults(err), tc.want, tc.fault)
			}
		})
	}
}

// TestParamMessages checks the words of the refusals that list what is
// allowed, and that the refused parameters point at what to use.
func TestParamMessages(t *testing.T) {
	for query, want := range map[string]string{
		"order_by=name": `order_by must be one of created_at, id, price, status, updated_at, got "name"`,
		"order=up":      `order must be asc or desc, got "up"`,
		"limit=5":       "limit is not supported: use page and per_page",
		"page=1&page=2": "page is given 2 times; give it once",
	} {
		_, err := ordersArgs(httptest.NewRequest("GET", "/orders?"+query, nil))
		if err == nil || err.Error() != want {
			t.Errorf("read(%q) = %v; want %q", query, err, want)
		}
	}
}

// TestPathID reads the {id} of a by-id operation.
func TestPathID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"1", 1, true}, {"42", 42, true}, {"0", 0, false}, {"-1", 0, false}, {"abc", 0, false},
		{"1.0", 0, false}, {"1e2", 0, false}, {"", 0, false}, {"99999999999999999999", 0, false},
	} {
		r := httptest.NewRequest("GET", "/orders/x?%zz", nil) // a by-id read has no query parameters to read
		rctx := chi.NewRouteContext()
		rctx.URLParams.Add("id", tc.in)
		r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx))
		got, err := pathID(r)
		if got != tc.want || (err == nil) != tc.ok || (err != nil && faults(err) != "id") {
			t.Errorf("read {id} %q = %d, %v; want %d, ok %v, a fault naming id", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// BenchmarkOrderParams measures the request validation of the hottest
// REST list: reading GET /orders's query string, as the document
// describes it, into the resolver's input.
func BenchmarkOrderParams(b *testing.B) {
	r := httptest.NewRequest("GET", "/orders?per_page=15&page=2&order_by=price&order=asc&configurator_id=1&start_date=2026-03-02&end_date=2026-03-05", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ordersArgs(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOrderParamsNone is the default order list, without parameters.
func BenchmarkOrderParamsNone(b *testing.B) {
	r := httptest.NewRequest("GET", "/orders", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ordersArgs(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkByID is the validation of a read by id: its {id}.
func BenchmarkByID(b *testing.B) {
	r := httptest.NewRequest("GET", "/orders/12", nil)
	rctx := chi.NewRouteContext()
	rctx.URLParams.Add("id", "12")
	r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pathID(r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestManyParams reads an operation of more parameters than any of v1's
// (params once kept them in an array of 8, and a ninth parameter
// panicked).
func TestManyParams(t *testing.T) {
	names := make([]string, 12)
	var query []string
	for i := range names {
		names[i] = fmt.Sprintf("p%d", i)
		query = append(query, fmt.Sprintf("p%d=%d", i, i*10))
	}
	r := httptest.NewRequest("GET", "/?"+strings.Join(query, "&")+"&p11=again", nil)
	q, err := readQuery(r, nil, names...)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range names[:11] {
		if got := q.int(name); got == nil || *got != i*10 {
			t.Errorf("%s = %v, want %d", name, shown(got), i*10)
		}
	}
	if got := q.int("p11"); got != nil {
		t.Errorf("p11, given twice, = %v, want a fault", *got)
	}
	if got := faults(q.errs); got != "p11" {
		t.Errorf("faults %q, want p11", got)
	}
}
