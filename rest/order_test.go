package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
)

// goldenCase is one successful request whose body is compared with
// testdata/<name>.golden.
type goldenCase struct{ name, path string }

// runGolden gets each case with owner 1's token and compares the bodies.
func runGolden(t *testing.T, cases []goldenCase) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				status, h, body := f.get(t, f.owner1, tc.path)
				if status != http.StatusOK || h.Get("Content-Type") != "application/json" {
					t.Fatalf("GET %s = %d %s; want 200 application/json: %s", tc.path, status, h.Get("Content-Type"), body)
				}
				golden(t, tc.name, body)
			})
		}
	})
}

// badParamCase is a request that must be refused with 400 naming param.
type badParamCase struct{ path, param string }

// runBadParams checks that each request is a 400 problem whose first
// field error names the parameter.
func runBadParams(t *testing.T, cases []badParamCase) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range cases {
			t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
				status, h, body := f.get(t, f.owner1, tc.path)
				p := problemOf(t, "GET "+tc.path, status, h, body, http.StatusBadRequest)
				if p.Code != "BAD_REQUEST" || len(p.Errors) == 0 || p.Errors[0].Name != tc.param {
					t.Fatalf("GET %s: problem %s; want errors[0].name %q", tc.path, body, tc.param)
				}
				if !strings.Contains(p.Errors[0].Reason, tc.param) || !strings.Contains(p.Detail, tc.param) {
					t.Errorf("GET %s: reason %q, detail %q; want both to name %s", tc.path, p.Errors[0].Reason, p.Detail, tc.param)
				}
			})
		}
	})
}

func TestOrdersGolden(t *testing.T) {
	runGolden(t, []goldenCase{
		{"orders", "/orders"},
		{"orders_filtered", "/orders?configurator_id=2&start_date=2026-03-03&end_date=2026-03-06&order_by=price&order=asc&per_page=2&page=2"},
		{"orders_all", "/orders?per_page=-1&order_by=id&order=asc"},
		{"order_1", "/orders/1"},
		// Without snapshot and print map.
		{"order_2", "/orders/2"},
	})
}

func TestOrdersBadParams(t *testing.T) {
	runBadParams(t, []badParamCase{
		{"/orders?page=abc", "page"},
		{"/orders?page=1.5", "page"},
		{"/orders?page=", "page"},
		{"/orders?page=1e3", "page"},
		{"/orders?page=0", "page"},
		{"/orders?page=-1", "page"},
		{"/orders?page=99999999999", "page"},
		{"/orders?page=1&page=2", "page"},
		{"/orders?per_page=0", "per_page"},
		{"/orders?per_page=101", "per_page"},
		{"/orders?per_page=-2", "per_page"},
		{"/orders?per_page=ten", "per_page"},
		{"/orders?per_page=", "per_page"},
		{"/orders?per_page=5&per_page=5", "per_page"},
		{"/orders?order=up", "order"},
		{"/orders?order=", "order"},
		{"/orders?order=asc&order=desc", "order"},
		{"/orders?order_by=name", "order_by"},
		{"/orders?order_by=customer_details", "order_by"},
		{"/orders?order_by=", "order_by"},
		{"/orders?order_by=created_at%20desc", "order_by"},
		{"/orders?configurator_id=abc", "configurator_id"},
		{"/orders?configurator_id=0", "configurator_id"},
		{"/orders?configurator_id=1.0", "configurator_id"},
		{"/orders?configurator_id=1&configurator_id=2", "configurator_id"},
		{"/orders?start_date=2026-3-1", "start_date"},
		{"/orders?start_date=01-03-2026", "start_date"},
		{"/orders?start_date=2026-02-30", "start_date"},
		{"/orders?start_date=", "start_date"},
		{"/orders?end_date=tomorrow", "end_date"},
		{"/orders?end_date=2026-03-01&end_date=2026-03-02", "end_date"},
		{"/orders?start_date=2026-03-05&end_date=2026-03-01", "end_date"},
		{"/orders?limit=10", "limit"},
		{"/orders?offset=5", "offset"},
		{"/orders?status=paid", "status"},
		{"/orders/abc", "id"},
		{"/orders/0", "id"},
		{"/orders/-4", "id"},
		{"/orders/1.5", "id"},
		{"/orders/99999999999999999999", "id"},
	})
}

func TestOrdersLooseParamsPointAtPages(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, name := range []string{"limit", "offset", "status"} {
			status, h, body := f.get(t, f.owner1, "/orders?"+name+"=1")
			p := problemOf(t, name, status, h, body, http.StatusBadRequest)
			if !strings.Contains(p.Detail, "page and per_page") {
				t.Errorf("%s: detail %q; want it to point at page and per_page", name, p.Detail)
			}
		}
		// Unknown parameters are ignored.
		if got := f.ids(t, f.owner1, "/orders?per_page=3&foo=bar&sort=x"); len(got) != 3 {
			t.Errorf("unknown parameters: %d orders; want 3", len(got))
		}
	})
}

// orderList is the order list envelope as a client reads it.
type orderList struct {
	Data []struct {
		ID        int    `json:"id"`
		CreatedAt string `json:"created_at"`
	} `json:"data"`
	Pagination struct {
		CurrentPage int     `json:"current_page"`
		PerPage     int     `json:"per_page"`
		Total       int     `json:"total"`
		LastPage    int     `json:"last_page"`
		Next        *string `json:"next_page_url"`
		Prev        *string `json:"prev_page_url"`
	} `json:"pagination"`
}

func TestOrdersPagination(t *testing.T) {
	base := testPublicURL + Prefix + "/orders?"
	url := func(s string) *string { s = base + s; return &s }
	type want struct {
		n, current, perPage, total, last int
		next, prev                       *string
	}
	cases := []struct {
		name, query string
		want        want
	}{
		{"default", "", want{15, 1, 15, 30, 2, url("page=2"), nil}},
		{"first", "per_page=10", want{10, 1, 10, 30, 3, url("page=2&per_page=10"), nil}},
		{"middle", "per_page=10&page=2", want{10, 2, 10, 30, 3, url("page=3&per_page=10"), url("page=1&per_page=10")}},
		{"last", "per_page=10&page=3", want{10, 3, 10, 30, 3, nil, url("page=2&per_page=10")}},
		{"partial last", "per_page=7&page=5", want{2, 5, 7, 30, 5, nil, url("page=4&per_page=7")}},
		{"past the end", "per_page=10&page=9", want{0, 9, 10, 30, 3, nil, url("page=3&per_page=10")}},
		{"all", "per_page=-1", want{30, 1, -1, 30, 1, nil, nil}},
		{"all page 2", "per_page=-1&page=2", want{30, 2, -1, 30, 1, nil, nil}},
		{"one per page", "per_page=1&page=30", want{1, 30, 1, 30, 30, nil, url("page=29&per_page=1")}},
		{
			"other params kept", "per_page=5&page=2&configurator_id=1&order=asc&zeta=z%20z&alpha=a&alpha=b",
			want{5, 2, 5, 18, 4,
				url("alpha=a&alpha=b&configurator_id=1&order=asc&page=3&per_page=5&zeta=z+z"),
				url("alpha=a&alpha=b&configurator_id=1&order=asc&page=1&per_page=5&zeta=z+z")},
		},
		{"empty", "start_date=2027-01-01", want{0, 1, 15, 0, 1, nil, nil}},
	}
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var l orderList
				f.ok(t, f.owner1, "/orders?"+tc.query, &l)
				p := l.Pagination
				got := want{len(l.Data), p.CurrentPage, p.PerPage, p.Total, p.LastPage, p.Next, p.Prev}
				if s(got) != s(tc.want) {
					t.Errorf("GET /orders?%s = %s; want %s", tc.query, s(got), s(tc.want))
				}
			})
		}
		// Following next from the first page visits every order once.
		seen := map[int]bool{}
		next := url("per_page=7")
		for pages := 0; next != nil; pages++ {
			if pages > 10 {
				t.Fatal("next_page_url does not end")
			}
			var l orderList
			f.ok(t, f.owner1, strings.TrimPrefix(*next, testPublicURL+Prefix), &l)
			for _, o := range l.Data {
				if seen[o.ID] {
					t.Errorf("order %d on two pages", o.ID)
				}
				seen[o.ID] = true
			}
			next = l.Pagination.Next
		}
		if len(seen) != 30 {
			t.Errorf("walked %d orders; want 30", len(seen))
		}
	})
}

// s renders a value with its pointers followed, for comparisons.
func s(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestOrdersDates(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		for _, tc := range []struct {
			query      string
			n          int
			first, end string // created_at prefix of the newest and the oldest
		}{
			// The demo has three orders of owner 1 a day, 2026-03-01 to 03-10.
			{"start_date=2026-03-02&end_date=2026-03-02", 3, "2026-03-02", "2026-03-02"},
			{"start_date=2026-03-09", 6, "2026-03-10", "2026-03-09"},
			{"end_date=2026-03-01", 3, "2026-03-01", "2026-03-01"},
			{"start_date=2026-03-01&end_date=2026-03-10", 30, "2026-03-10", "2026-03-01"},
			{"start_date=2026-03-11", 0, "", ""},
		} {
			var l orderList
			f.ok(t, f.owner1, "/orders?per_page=-1&"+tc.query, &l)
			if len(l.Data) != tc.n {
				t.Errorf("%s: %d orders; want %d", tc.query, len(l.Data), tc.n)
				continue
			}
			if tc.n > 0 && (!strings.HasPrefix(l.Data[0].CreatedAt, tc.first) || !strings.HasPrefix(l.Data[tc.n-1].CreatedAt, tc.end)) {
				t.Errorf("%s: created_at from %s to %s; want %s to %s", tc.query, l.Data[0].CreatedAt, l.Data[tc.n-1].CreatedAt, tc.first, tc.end)
			}
		}
	})
}
