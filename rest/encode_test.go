package rest

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestAppendersWriteWhatEncodingJSONWrites holds every appender to
// encoding/json (as writeBody configures it) on generated values: text
// with every kind of character JSON escapes, invalid UTF-8, U+2028,
// numbers at the edges of the ES6 formatting, nulls, empty lists and raw
// JSON with and without white space.
func TestAppendersWriteWhatEncodingJSONWrites(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(7, 8))}
	for i := range 2000 {
		values := []any{
			g.material(), g.order(), g.orderPage(), g.option(),
			// The arrays from here on are written only inside the shapes
			// (parameter_list), so fastShape does not list them.
			array[materialJSON]{g.material(), g.material()}, array[optionJSON]{}, array[materialJSON](nil),
		}
		ms := []materialJSON{g.material(), g.material()}
		for _, l := range []records{presentEach(ms, same), presentEach(ms[:0], same), presentEach[materialJSON, materialJSON](nil, same)} {
			want := encodingJSON(t, l)
			if ref := encodingJSON(t, presentAll(l.(each[materialJSON, materialJSON]).items, same)); !bytes.Equal(want, ref) {
				t.Fatalf("case %d: each's MarshalJSON %s; presentAll %s", i, want, ref)
			}
			if got, ok := l.appendJSON(nil); !ok || !bytes.Equal(got, want) {
				t.Fatalf("case %d: each\nappender:      %s\nencoding/json: %s", i, got, want)
			}
		}
		for j, v := range values {
			want := encodingJSON(t, v)
			a := fastShape(v)
			if j >= 4 {
				a = v.(appender)
			}
			if a == nil {
				t.Fatalf("%T has no appender", v)
			}
			got, ok := a.appendJSON(nil)
			if !ok {
				t.Fatalf("case %d: %T refused a value encoding/json writes:\n%s", i, v, want)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("case %d: %T\nappender:      %s\nencoding/json: %s", i, v, got, want)
			}
		}
	}
}

// TestAppendersRefuseWhatEncodingJSONRefuses: NaN and infinities are not
// JSON; both fail, so writeBody answers its 500 either way.
func TestAppendersRefuseWhatEncodingJSONRefuses(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, v := range []any{materialJSON{Opacity: f}, orderJSON{Price: f}, orderPageJSON{Data: presentEach([]orderJSON{{Price: f}}, same)}} {
			if _, err := json.Marshal(v); err == nil {
				t.Fatalf("encoding/json wrote %T with %v", v, f)
			}
			if _, ok := fastShape(v).appendJSON(nil); ok {
				t.Errorf("appender of %T wrote %v", v, f)
			}
		}
	}
}

func TestSharedShapesKeepEncodingJSON(t *testing.T) {
	for _, v := range []any{sharedOptionJSON{}, sharedVariationJSON{}, sharedJSON{}, []sharedOptionJSON{}} {
		if fastShape(v) != nil {
			t.Errorf("%T borrows an appender of the shape it embeds", v)
		}
	}
}

// same presents a shape as itself, for lists of generated shapes.
func same[J any](v J) J { return v }

func encodingJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

type gen struct{ r *rand.Rand }

var pieces = []string{
	"", "a", "Oak", " ", "\"", "\\", "/", "<b>&amp;</b>", "\n", "\r", "\t", "\b", "\f", "\x00", "\x01", "\x1f", "\x7f",
	"é", "日本", "\u2028", "\u2029", "\xff", "\xe2\x80", "\xc3", "😀", "\ufffd", "{}", "https://x.test/a?b=c&d=e",
}

func (g gen) str() string {
	var b strings.Builder
	for range g.r.IntN(5) {
		b.WriteString(pieces[g.r.IntN(len(pieces))])
	}
	return b.String()
}

func (g gen) strPtr() *string {
	if g.r.IntN(3) == 0 {
		return nil
	}
	s := g.str()
	return &s
}

func (g gen) intPtr() *int {
	if g.r.IntN(3) == 0 {
		return nil
	}
	n := g.int()
	return &n
}

func (g gen) int() int {
	switch g.r.IntN(4) {
	case 0:
		return 0
	case 1:
		return -g.r.IntN(1000)
	case 2:
		return math.MaxInt64 - g.r.IntN(10)
	}
	return g.r.IntN(1 << 40)
}

var floats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.125, 1e300, -1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64}

func (g gen) float() float64 {
	if g.r.IntN(2) == 0 {
		return floats[g.r.IntN(len(floats))]
	}
	return (g.r.Float64() - 0.5) * math.Pow(10, float64(g.r.IntN(60)-30))
}

var raws = []string{
	"", `{}`, `{"a":1}`, `{ "a" : [1, 2, {"b" : "c d"}] }`, "{\n\t\"x\": \"y\\\" z\"\r\n}", `{"s":"a b\"c"}`, `[]`, `null`,
	`{"u":"\u2028"}`, ` { "k\\" : "v \\\" w" , "n" : [ ] } `, `{"name": "Customer 1", "address": {"zip": "1", "city": "Rome"}}`,
	`{"e":"\\\\", "f" : "\\"}`, "{\"t\":\"tab\\there\"}",
}

func (g gen) raw() json.RawMessage {
	s := raws[g.r.IntN(len(raws))]
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func (g gen) material() materialJSON {
	return materialJSON{
		ID: g.int(), Name: g.str(), MaterialFile: g.strPtr(), CategoryID: g.intPtr(), TextureID: g.intPtr(),
		Status: g.r.IntN(2) == 0, MaterialType: g.str(), Surface: g.str(), Bump: g.r.IntN(2) == 0, Color: g.str(),
		Opacity: g.float(), Specular: g.float(), Reflection: g.float(), CreatedAt: g.str(), UpdatedAt: g.str(), CreatedBy: g.str(),
	}
}

func (g gen) order() orderJSON {
	var print []string
	if g.r.IntN(3) > 0 {
		print = make([]string, g.r.IntN(3))
		for i := range print {
			print[i] = g.str()
		}
	}
	return orderJSON{
		ID: g.int(), Price: g.float(), Status: g.str(), CustomerDetails: g.raw(), ConfiguratorSummary: g.raw(),
		ConfiguratorSnapshot: g.strPtr(), ConfiguratorPrintMap: print, InvoiceURL: g.strPtr(), OrderStorefront: g.strPtr(),
		CreatedAt: g.str(), UpdatedAt: g.str(), Configurator: orderConfiguratorJSON{ID: g.int(), Name: g.str()},
	}
}

func (g gen) orderPage() orderPageJSON {
	var data []orderJSON
	if g.r.IntN(4) > 0 {
		data = make([]orderJSON, g.r.IntN(4))
		for i := range data {
			data[i] = g.order()
		}
	}
	return orderPageJSON{Data: presentEach(data, same), Pagination: paginationJSON{
		CurrentPage: g.int(), PerPage: g.int(), Total: g.int(), LastPage: g.int(), NextPageURL: g.strPtr(), PrevPageURL: g.strPtr(),
	}}
}

func (g gen) option() optionJSON {
	var vs []variationJSON
	if g.r.IntN(4) > 0 {
		vs = make([]variationJSON, g.r.IntN(4))
		for i := range vs {
			var cc *bool
			if g.r.IntN(2) == 0 {
				b := g.r.IntN(2) == 0
				cc = &b
			}
			vs[i] = variationJSON{
				ID: g.int(), ConfiguratorOptionID: g.int(), Name: g.str(), Position: g.int(), Selected: g.r.IntN(2) == 0,
				ModelID: g.intPtr(), MaterialID: g.intPtr(), MaterialCategoryID: g.intPtr(), TextValue: g.strPtr(), CustomColor: cc,
				TextFontSize: g.strPtr(), TextFontFamily: g.strPtr(), TextColorCategoryID: g.intPtr(), NumericalDefault: g.intPtr(),
				CreatedAt: g.str(), UpdatedAt: g.str(),
			}
		}
	}
	return optionJSON{
		ID: g.int(), ConfiguratorID: g.int(), Title: g.str(), Type: g.str(), Settings: g.raw(), ParameterList: vs,
		Position: g.int(), CreatedAt: g.str(), UpdatedAt: g.str(), CreatedBy: g.str(),
	}
}

// TestPlain8 holds plain8 to its definition, byte by byte: every byte
// value at every position of an otherwise plain word, and generated words
// with several bytes that need care.
func TestPlain8(t *testing.T) {
	plain := func(s string) bool {
		for i := range 8 {
			if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return false
			}
		}
		return true
	}
	for pos := range 8 {
		for c := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			if got, want := plain8(string(w)), plain(string(w)); got != want {
				t.Fatalf("plain8(%q) = %v; want %v", w, got, want)
			}
		}
	}
	g := rand.New(rand.NewPCG(27, 6))
	for range 100000 {
		w := make([]byte, 8)
		for i := range w {
			w[i] = byte(g.IntN(256))
			if g.IntN(3) > 0 {
				w[i] = byte(0x20 + g.IntN(0x60))
			}
		}
		if got, want := plain8(string(w)), plain(string(w)); got != want {
			t.Fatalf("plain8(%q) = %v; want %v", w, got, want)
		}
	}
}

// TestTimestamp holds timestamp to time.Format(time.RFC3339) in UTC: every
// second of a day, generated instants over the years 0 to 9999 in several
// zones and with fractions, and the years outside them, which it leaves to
// Format.
func TestTimestamp(t *testing.T) {
	want := func(tm time.Time) string { return tm.UTC().Format(time.RFC3339) }
	day := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	for s := range 24 * 3600 {
		if tm := day.Add(time.Duration(s) * time.Second); timestamp(tm) != want(tm) {
			t.Fatalf("timestamp(%v) = %s; want %s", tm, timestamp(tm), want(tm))
		}
	}
	zones := []*time.Location{time.UTC, time.FixedZone("east", 5*3600+1800), time.FixedZone("west", -11*3600)}
	g := rand.New(rand.NewPCG(27, 8))
	lo, hi := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range 200000 {
		tm := time.Unix(lo+g.Int64N(hi-lo), g.Int64N(1e9)).In(zones[g.IntN(len(zones))])
		if timestamp(tm) != want(tm) {
			t.Fatalf("timestamp(%v) = %s; want %s", tm, timestamp(tm), want(tm))
		}
	}
	for _, tm := range []time.Time{time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), {}} {
		if timestamp(tm) != want(tm) {
			t.Fatalf("timestamp(%v) = %s; want %s", tm, timestamp(tm), want(tm))
		}
	}
}
