package valid

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/apperr"
)

// nest returns a JSON object nested levels deep: {"a":{"a":...{}}}.
func nest(levels int) string {
	return strings.Repeat(`{"a":`, levels-1) + "{}" + strings.Repeat("}", levels-1)
}

func TestOrder(t *testing.T) {
	obj := json.RawMessage(`{"name":"Ada"}`)
	for _, tc := range []struct {
		name    string
		price   float64
		details string
		maps    int
		fields  []string
		summary string // obj when empty
	}{
		{"valid", 249.9, `{"name":"Ada"}`, 2, nil, ""},
		{"free", 0, `{}`, 0, nil, ""},
		{"the largest price", MaxPrice, `{}`, 0, nil, ""},
		{"a price past the largest", MaxPrice + 0.01, `{}`, 0, []string{"price"}, ""},
		{"price 1e26", 1e26, `{}`, 0, []string{"price"}, ""},
		{"negative price", -1, `{}`, 0, []string{"price"}, ""},
		{"NaN", math.NaN(), `{}`, 0, []string{"price"}, ""},
		{"infinite", math.Inf(1), `{}`, 0, []string{"price"}, ""},
		{"details 20 levels deep", 1, nest(MaxJSONDepth), 0, nil, ""},
		{"details 21 levels deep", 1, nest(MaxJSONDepth + 1), 0, []string{"customer_details"}, ""},
		{"details 10000 levels deep", 1, nest(10000), 0, []string{"customer_details"}, ""},
		{"details of 64 KiB", 1, `{"n":"` + strings.Repeat("x", MaxJSONBytes-8) + `"}`, 0, nil, ""},
		{"a 100 KB string in the details", 1, `{"n":"` + strings.Repeat("x", 100_000) + `"}`, 0, []string{"customer_details"}, ""},
		{"details not an object", 1, `[1]`, 0, []string{"customer_details"}, ""},
		{"details jsonb cannot hold", 1, `{"n":"\u0000"}`, 0, []string{"customer_details"}, ""},
		{"a summary with a huge exponent", 1, `{}`, 0, []string{"configurator_summary"}, `{"n":1e99999}`},
		{"every fault at once", -5, `[`, MaxPrintMaps + 1, []string{"price", "customer_details", "configurator_summary", "configurator_print_map"}, `{`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			summary := obj
			if tc.summary != "" {
				summary = json.RawMessage(tc.summary)
			}
			details := json.RawMessage(tc.details)
			err := Order(tc.price, &details, &summary, tc.maps)
			var got []string
			for _, e := range apperr.Errors(err) {
				if e.Kind != apperr.Invalid {
					t.Errorf("kind %s; want %s", e.Kind, apperr.Invalid)
				}
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Errorf("Order faults %v (%v); want %v", got, err, tc.fields)
			}
			if err == nil && (string(details) != mustStored(t, tc.details) || string(summary) != string(obj)) {
				t.Errorf("Order left the details %s, the summary %s; want their stored forms", details, summary)
			}
		})
	}
}

// mustStored is the stored form of raw.
func mustStored(t *testing.T, raw string) string {
	t.Helper()
	s, err := Stored([]byte(raw))
	if err != nil {
		t.Fatalf("Stored(%.100s): %v", raw, err)
	}
	return string(s)
}

func TestJSON(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		msg       string
	}{
		{"flat", `{"a":1,"b":[1,2]}`, ""},
		{"brackets in strings do not nest", `{"a":"` + strings.Repeat("{[", 100) + `"}`, ""},
		{"escaped quotes stay in the string", `{"a":"\"` + strings.Repeat("{", 100) + `\\"}`, ""},
		{"an escaped backslash ends the string", `["\\"` + strings.Repeat(",[", 20) + strings.Repeat("]", 21), "options nests more than 20 levels deep"},
		{"escaped quote then brackets", `{"a":"\"{{{{{{{{{{{{{{{{{{{{{{{{"}`, ""},
		{"arrays count", strings.Repeat("[", 21) + strings.Repeat("]", 21), "options nests more than 20 levels deep"},
		{"too large", `{"a":"` + strings.Repeat("x", MaxJSONBytes) + `"}`, "options is 65544 bytes of JSON; the limit is 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := JSON("options", []byte(tc.raw))
			switch {
			case tc.msg == "" && err != nil:
				t.Errorf("JSON = %v; want nil", err)
			case tc.msg != "" && (err == nil || err.Error() != tc.msg):
				t.Errorf("JSON = %v; want %q", err, tc.msg)
			}
		})
	}
}

func TestDepth(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int
	}{
		{`1`, 0}, {`{}`, 1}, {`[[]]`, 2}, {`{"a":[{"b":{}}]}`, 4}, {`"{["`, 0}, {`["\\", [1]]`, 2}, {nest(50), 6},
	} {
		if got := depth([]byte(tc.raw), 5); got != tc.want {
			t.Errorf("depth(%.30s, 5) = %d; want %d", tc.raw, got, tc.want)
		}
	}
}
