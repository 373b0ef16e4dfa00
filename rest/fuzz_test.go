package rest

import (
	"bytes"
	"encoding/json"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/scalar"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// FuzzParams: whatever query string a client sends to the order list,
// the contract's parameter readers (bind.go, built from the OpenAPI
// document as the router builds them) answer without a panic; a refusal
// is Invalid about a named parameter (or the malformed query) with a
// short message, what they accept is of its GraphQL type (32-bit Int, ID
// of 1 or more, an enum value, a UTC date), and the resolver's range
// check of the page refuses only as Invalid. allPages, which the rate
// limiter reads before the binder runs, agrees with it on per_page=-1.
func FuzzParams(f *testing.F) {
	for _, seed := range []string{
		"", "per_page=5&page=2&order_by=price&order=asc&configurator_id=1&start_date=2026-01-01&end_date=2026-12-31",
		"per_page=-1", "per_page=%2D01", "per%5Fpage=-1", "page=0", "page=1.5", "page=1&page=2", "order=DESC", "order_by=colour",
		"start_date=2026-03-01T23:30:00-02:00", "start_date=2026-13-01", "configurator_id=0", "limit=5", "status=paid",
		"per_page=99999999999", "%zz", "a=1;b=2", "per_page=+1", "per_page= -1", "per_page=-1&per_page=-1", "per_page=-1;",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		args, err := ordersArgs(&http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/orders", RawQuery: query}})
		if err != nil {
			for _, e := range apperr.Errors(err) {
				if e.Kind != apperr.Invalid {
					t.Fatalf("%q: %v is %s; want %s", query, e, e.Kind, apperr.Invalid)
				}
				if msg := e.Error(); len(msg) > 400 {
					t.Fatalf("%q: a %d-byte message echoes the input: %.100s", query, len(msg), msg)
				}
			}
			if len(apperr.Errors(err)) == 0 {
				t.Fatalf("%q: %v is not an apperr error", query, err)
			}
			return
		}
		for _, n := range []*int{args.Page, args.PerPage} {
			if n != nil && (*n > math.MaxInt32 || *n < math.MinInt32) {
				t.Fatalf("%q: %d is not a 32-bit integer", query, *n)
			}
		}
		if args.Where != nil && args.Where.ConfiguratorID != nil && *args.Where.ConfiguratorID < 1 {
			t.Fatalf("%q: configurator_id %d accepted", query, *args.Where.ConfiguratorID)
		}
		if by := args.OrderBy; by != nil {
			var again ent.OrderOrderField
			if err := again.UnmarshalGQL(by.String()); err != nil {
				t.Fatalf("%q: order_by %v accepted", query, by)
			}
		}
		if dir := args.Order; dir != nil && dir.Validate() != nil {
			t.Fatalf("%q: order %v accepted", query, dir)
		}
		for _, d := range []*scalar.Date{args.StartDate, args.EndDate} {
			if d != nil && (d.Location() != time.UTC || d.Hour() != 0 || d.Minute() != 0 || d.Second() != 0 || d.Nanosecond() != 0) {
				t.Fatalf("%q: date %v is not a UTC midnight", query, d.Time)
			}
		}
		if _, _, err := valid.Page(args.Page, args.PerPage); err != nil && apperr.KindOf(err) != apperr.Invalid {
			t.Fatalf("%q: valid.Page: %v is %s", query, err, apperr.KindOf(err))
		}
		if got, want := allPages(query), args.PerPage != nil && *args.PerPage == valid.AllPages; got != want {
			t.Fatalf("allPages(%q) = %v; the list reads per_page %v", query, got, deref(args.PerPage))
		}
	})
}

// fuzzBoundary is the boundary of the fuzzed order forms.
const fuzzBoundary = "fuzzboundary"

// fuzzForm encodes text parts and one file part as multipart/form-data.
func fuzzForm(fields map[string]string, file string) []byte {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.SetBoundary(fuzzBoundary)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if file != "" {
		w, _ := mw.CreateFormFile(file, "x.png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	}
	mw.Close()
	return b.Bytes()
}

// FuzzOrderForm: whatever multipart body a client sends to POST /orders,
// the contract's body reader (bind.go, built from the OpenAPI document)
// answers without a panic and refuses with client errors only (never an
// internal one); an order it accepts has a finite price, a positive
// configurator and JSON objects, and the bounds of valid.Order then
// refuse only as Invalid.
func FuzzOrderForm(f *testing.F) {
	valid1 := map[string]string{"price": "249.90", "configurator_id": "1", "customer_details": `{"name":"Ada"}`, "configurator_summary": `{"Frame":"Grand"}`}
	f.Add(fuzzForm(valid1, ""))
	f.Add(fuzzForm(valid1, "configurator_snapshot"))
	f.Add(fuzzForm(valid1, "configurator_print_map[0]"))
	f.Add(fuzzForm(valid1, "configurator_print_map[x]"))
	f.Add(fuzzForm(map[string]string{"price": "1e26", "configurator_id": "0", "customer_details": `[1]`}, "price"))
	f.Add(fuzzForm(map[string]string{"price": "NaN", "configurator_id": "1.5", "customer_details": `{"a":{"a":{}}}`, "configurator_summary": `{} x`}, ""))
	f.Add([]byte("--" + fuzzBoundary + "\r\nContent-Disposition: form-data; name=\"price\"\r\n\r\n1\r\n--" + fuzzBoundary))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/orders", bytes.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+fuzzBoundary)
		in, done, err := readOrder(httptest.NewRecorder(), req)
		defer done()
		if err != nil {
			for _, e := range apperr.Errors(err) {
				switch e.Kind {
				case apperr.Invalid, apperr.TooLarge, apperr.Unsupported:
				default:
					t.Fatalf("read: %v is %s; want a client error", e, e.Kind)
				}
			}
			if len(apperr.Errors(err)) == 0 {
				t.Fatalf("read: %v is not an apperr error", err)
			}
			return
		}
		if math.IsNaN(in.Price) || math.IsInf(in.Price, 0) || in.ConfiguratorID < 1 {
			t.Fatalf("read accepted price %v, configurator %d", in.Price, in.ConfiguratorID)
		}
		for _, raw := range []json.RawMessage{in.CustomerDetails, in.ConfiguratorSummary} {
			if !json.Valid(raw) || bytes.TrimSpace(raw)[0] != '{' {
				t.Fatalf("read accepted %q as a JSON object", raw)
			}
		}
		for _, e := range apperr.Errors(valid.Order(in.Price, &in.CustomerDetails, &in.ConfiguratorSummary, len(in.ConfiguratorPrintMap))) {
			if e.Kind != apperr.Invalid {
				t.Fatalf("valid.Order: %v is %s", e, e.Kind)
			}
		}
	})
}
