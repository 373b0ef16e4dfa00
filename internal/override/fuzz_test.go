package override

import (
	"errors"
	"strings"
	"testing"
)

// fuzzOptions is a configurator with an option of each rule: select-like,
// material, text, numeral and one that takes only an id.
var fuzzOptions = []Option{
	{ID: 1, Type: "select", Variations: []Variation{{ID: 10, Selected: true}, {ID: 11}, {ID: 12}}},
	{ID: 2, Type: "material", Variations: []Variation{{ID: 20, Selected: true, MaterialID: ip(1)}, {ID: 21}}},
	{ID: 3, Type: "text", Variations: []Variation{{ID: 30, TextValue: sp("a")}}},
	{ID: 4, Type: "numeral", Variations: []Variation{{ID: 40, NumericalDefault: ip(3)}}},
	{ID: 5, Type: "patterns", Variations: []Variation{{ID: 50}}},
}

// FuzzParse: whatever a client posts as options, Parse answers without a
// panic, a refusal is an *Error whose path is inside options, and what it
// accepts is written canonically in a form that Parse and Decode read back
// to the same data, and applies to every option.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"1":{"id":11}}`,
		`{"2":{"id":21,"material_id":3,"selected_parts":["seat","back"]},"3":{"id":30,"text_value":"Ada","custom_color":true}}`,
		`{"4":{"id":40,"numerical_default":7},"5":{"id":50}}`,
		`{"1":{"id":11,"selected":false},"1":{"id":12}}`,
		`{"9":{"id":1}}`, `{}`, `[]`, `{"1":{"id":"11"}}`, `{"1":{"id":1e3}}`, `{"01":{"id":11}}`,
		`{"2":{"id":21,"selected_parts":[1]}}`, `{"3":{"id":30,"text_value":"\u0000"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := Parse(raw, fuzzOptions)
		if err != nil {
			var oe *Error
			if !errors.As(err, &oe) || !strings.HasPrefix(oe.Path, "options") || oe.Message == "" {
				t.Fatalf("Parse(%q) = %#v; want an *Error about options", raw, err)
			}
			return
		}
		canonical, err := d.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON of %q: %v", raw, err)
		}
		again, err := Parse(canonical, fuzzOptions)
		if err != nil || again.Digest() != d.Digest() {
			t.Fatalf("Parse(%s) of the canonical form of %q = %v; want the same data", canonical, raw, err)
		}
		decoded, err := Decode(canonical)
		if err != nil || decoded.Digest() != d.Digest() {
			t.Fatalf("Decode(%s) = %v; want the same data", canonical, err)
		}
		for _, o := range fuzzOptions {
			if vs := Apply(o, d, true); len(vs) != len(o.Variations) {
				t.Fatalf("Apply(%d) of %s: %d variations; want %d", o.ID, canonical, len(vs), len(o.Variations))
			}
		}
	})
}
