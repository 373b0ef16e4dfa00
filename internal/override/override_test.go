package override

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func ip(n int) *int       { return &n }
func sp(s string) *string { return &s }
func bp(b bool) *bool     { return &b }

// show renders variations with pointers dereferenced, for failure messages
// and for snapshots.
func show(vs []Variation) string {
	if vs == nil {
		return "nil"
	}
	var b strings.Builder
	b.WriteString("[")
	for i, v := range vs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "{id:%d sel:%t", v.ID, v.Selected)
		showPtr(&b, "model", v.ModelID)
		showPtr(&b, "mat", v.MaterialID)
		showPtr(&b, "cat", v.MaterialCategoryID)
		showPtr(&b, "text", v.TextValue)
		showPtr(&b, "custom", v.CustomColor)
		showPtr(&b, "size", v.TextFontSize)
		showPtr(&b, "family", v.TextFontFamily)
		showPtr(&b, "color", v.TextColorCategoryID)
		showPtr(&b, "num", v.NumericalDefault)
		if v.SelectedParts != nil {
			fmt.Fprintf(&b, " parts:%q", v.SelectedParts)
		}
		b.WriteString("}")
	}
	b.WriteString("]")
	return b.String()
}

func showPtr[T any](b *strings.Builder, name string, p *T) {
	if p != nil {
		fmt.Fprintf(b, " %s:%v", name, *p)
	}
}

// showData renders d in its canonical form.
func showData(d Data) string {
	b, err := d.MarshalJSON()
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

// scribble overwrites every pointer target and slice element of vs, to
// prove that they are not shared with anything else.
func scribble(vs []Variation) {
	for i := range vs {
		v := &vs[i]
		v.Selected = !v.Selected
		for _, p := range []*int{v.ModelID, v.MaterialID, v.MaterialCategoryID, v.TextColorCategoryID, v.NumericalDefault} {
			if p != nil {
				*p = -777
			}
		}
		for _, p := range []*string{v.TextValue, v.TextFontSize, v.TextFontFamily} {
			if p != nil {
				*p = "scribbled"
			}
		}
		if v.CustomColor != nil {
			*v.CustomColor = !*v.CustomColor
		}
		for j := range v.SelectedParts {
			v.SelectedParts[j] = "scribbled"
		}
	}
}

func selectVars() []Variation {
	return []Variation{{ID: 1, Selected: true}, {ID: 2}, {ID: 3}}
}

func materialVars() []Variation {
	return []Variation{
		{ID: 1, Selected: true, ModelID: ip(10), MaterialID: ip(20), MaterialCategoryID: ip(30), TextValue: sp("keep"), SelectedParts: []string{"old"}},
		{ID: 2, ModelID: ip(11), MaterialID: ip(21), MaterialCategoryID: ip(31)},
		{ID: 3},
	}
}

func textVars() []Variation {
	return []Variation{
		{ID: 1, TextValue: sp("hello"), CustomColor: bp(false), TextFontSize: sp("12px"), TextFontFamily: sp("Arial"), TextColorCategoryID: ip(5), ModelID: ip(9)},
		{ID: 2, TextValue: sp("other"), TextFontSize: sp("10px")},
	}
}

func numeralVars() []Variation {
	return []Variation{{ID: 1, NumericalDefault: ip(3)}, {ID: 2, NumericalDefault: ip(4)}}
}

func TestApply(t *testing.T) {
	type tc struct {
		name    string
		o       Option
		d       Data
		forUser bool
		want    []Variation
	}
	tests := []tc{}
	for _, typ := range []string{"select", "radio", "checkbox", "select_thumb", "arrows"} {
		tests = append(tests,
			tc{
				name:    typ + " selects the matching variation only",
				o:       Option{ID: 7, Type: typ, Variations: selectVars()},
				d:       Data{7: {ID: 2}},
				forUser: true,
				want:    []Variation{{ID: 1}, {ID: 2, Selected: true}, {ID: 3}},
			},
			tc{
				name:    typ + " selects by id even with selected false",
				o:       Option{ID: 7, Type: typ, Variations: selectVars()},
				d:       Data{7: {ID: 3, Selected: bp(false)}},
				forUser: true,
				want:    []Variation{{ID: 1}, {ID: 2}, {ID: 3, Selected: true}},
			},
			tc{
				name:    typ + " unmatched id leaves selection as it was",
				o:       Option{ID: 7, Type: typ, Variations: selectVars()},
				d:       Data{7: {ID: 99}},
				forUser: true,
				want:    selectVars(),
			},
			tc{
				name:    typ + " not for user leaves selection as it was",
				o:       Option{ID: 7, Type: typ, Variations: selectVars()},
				d:       Data{7: {ID: 2}},
				forUser: false,
				want:    selectVars(),
			},
		)
	}
	tests = append(tests, []tc{
		{
			name:    "select keeps other fields",
			o:       Option{ID: 7, Type: "select", Variations: []Variation{{ID: 1, Selected: true, ModelID: ip(4)}, {ID: 2, TextValue: sp("x")}}},
			d:       Data{7: {ID: 2, ModelID: ip(100)}},
			forUser: true,
			want:    []Variation{{ID: 1, ModelID: ip(4)}, {ID: 2, Selected: true, TextValue: sp("x")}},
		},
		{
			name:    "select duplicate variation ids both selected",
			o:       Option{ID: 7, Type: "select", Variations: []Variation{{ID: 1, Selected: true}, {ID: 2}, {ID: 2}}},
			d:       Data{7: {ID: 2}},
			forUser: true,
			want:    []Variation{{ID: 1}, {ID: 2, Selected: true}, {ID: 2, Selected: true}},
		},
		{
			name: "material all fields supplied",
			o:    Option{ID: 7, Type: "material", Variations: materialVars()},
			d: Data{7: {ID: 1, ModelID: ip(100), MaterialID: ip(200), MaterialCategoryID: ip(300),
				SelectedParts: []string{"seat", "back"}}},
			forUser: true,
			want: []Variation{
				{ID: 1, Selected: true, ModelID: ip(100), MaterialID: ip(200), MaterialCategoryID: ip(300), TextValue: sp("keep"), SelectedParts: []string{"seat", "back"}},
				{ID: 2, ModelID: ip(11), MaterialID: ip(21), MaterialCategoryID: ip(31)},
				{ID: 3},
			},
		},
		{
			name:    "material some fields supplied keeps the others",
			o:       Option{ID: 7, Type: "material", Variations: materialVars()},
			d:       Data{7: {ID: 2, MaterialID: ip(222)}},
			forUser: true,
			want: []Variation{
				materialVars()[0],
				{ID: 2, ModelID: ip(11), MaterialID: ip(222), MaterialCategoryID: ip(31)},
				{ID: 3},
			},
		},
		{
			name:    "material no fields supplied changes nothing",
			o:       Option{ID: 7, Type: "material", Variations: materialVars()},
			d:       Data{7: {ID: 2}},
			forUser: true,
			want:    materialVars(),
		},
		{
			name:    "material does not change selected",
			o:       Option{ID: 7, Type: "material", Variations: materialVars()},
			d:       Data{7: {ID: 2, Selected: bp(true), ModelID: ip(5)}},
			forUser: true,
			want: []Variation{
				materialVars()[0],
				{ID: 2, ModelID: ip(5), MaterialID: ip(21), MaterialCategoryID: ip(31)},
				{ID: 3},
			},
		},
		{
			name:    "material sets fields the variation lacked",
			o:       Option{ID: 7, Type: "material", Variations: materialVars()},
			d:       Data{7: {ID: 3, ModelID: ip(1), MaterialCategoryID: ip(2)}},
			forUser: true,
			want:    append(materialVars()[:2], Variation{ID: 3, ModelID: ip(1), MaterialCategoryID: ip(2)}),
		},
		{
			name:    "material selected_parts kept on the matching variation",
			o:       Option{ID: 7, Type: "material", Variations: materialVars()},
			d:       Data{7: {ID: 2, SelectedParts: []string{"legs"}}},
			forUser: true,
			want: []Variation{
				materialVars()[0],
				{ID: 2, ModelID: ip(11), MaterialID: ip(21), MaterialCategoryID: ip(31), SelectedParts: []string{"legs"}},
				{ID: 3},
			},
		},
		{
			name:    "material selected_parts supplied empty replaces",
			o:       Option{ID: 7, Type: "material", Variations: materialVars()},
			d:       Data{7: {ID: 1, SelectedParts: []string{}}},
			forUser: true,
			want: append([]Variation{
				{ID: 1, Selected: true, ModelID: ip(10), MaterialID: ip(20), MaterialCategoryID: ip(30), TextValue: sp("keep"), SelectedParts: []string{}},
			}, materialVars()[1:]...),
		},
		{
			name:    "material selected_parts not supplied keeps existing",
			o:       Option{ID: 7, Type: "material", Variations: materialVars()},
			d:       Data{7: {ID: 1, ModelID: ip(8)}},
			forUser: true,
			want: append([]Variation{
				{ID: 1, Selected: true, ModelID: ip(8), MaterialID: ip(20), MaterialCategoryID: ip(30), TextValue: sp("keep"), SelectedParts: []string{"old"}},
			}, materialVars()[1:]...),
		},
		{
			name:    "material ignores text and numeral fields",
			o:       Option{ID: 7, Type: "material", Variations: materialVars()},
			d:       Data{7: {ID: 1, TextValue: sp("new"), NumericalDefault: ip(9), TextColorCategoryID: ip(9)}},
			forUser: true,
			want:    materialVars(),
		},
		{
			name:    "material unmatched id",
			o:       Option{ID: 7, Type: "material", Variations: materialVars()},
			d:       Data{7: {ID: 99, ModelID: ip(100)}},
			forUser: true,
			want:    materialVars(),
		},
		{
			name: "text all fields supplied",
			o:    Option{ID: 7, Type: "text", Variations: textVars()},
			d: Data{7: {ID: 1, TextValue: sp("bonjour"), CustomColor: bp(true), TextFontSize: sp("14px"),
				TextFontFamily: sp("Inter"), TextColorCategoryID: ip(6)}},
			forUser: true,
			want: []Variation{
				{ID: 1, TextValue: sp("bonjour"), CustomColor: bp(true), TextFontSize: sp("14px"), TextFontFamily: sp("Inter"), TextColorCategoryID: ip(6), ModelID: ip(9)},
				textVars()[1],
			},
		},
		{
			name:    "text some fields supplied keeps the others",
			o:       Option{ID: 7, Type: "text", Variations: textVars()},
			d:       Data{7: {ID: 2, TextValue: sp(""), CustomColor: bp(true)}},
			forUser: true,
			want: []Variation{
				textVars()[0],
				{ID: 2, TextValue: sp(""), CustomColor: bp(true), TextFontSize: sp("10px")},
			},
		},
		{
			name:    "text no fields supplied changes nothing",
			o:       Option{ID: 7, Type: "text", Variations: textVars()},
			d:       Data{7: {ID: 1}},
			forUser: true,
			want:    textVars(),
		},
		{
			name:    "text ignores material fields",
			o:       Option{ID: 7, Type: "text", Variations: textVars()},
			d:       Data{7: {ID: 1, ModelID: ip(1), SelectedParts: []string{"a"}}},
			forUser: true,
			want:    textVars(),
		},
		{
			name:    "text unmatched id",
			o:       Option{ID: 7, Type: "text", Variations: textVars()},
			d:       Data{7: {ID: 5, TextValue: sp("x")}},
			forUser: true,
			want:    textVars(),
		},
		{
			name:    "numeral supplied",
			o:       Option{ID: 7, Type: "numeral", Variations: numeralVars()},
			d:       Data{7: {ID: 2, NumericalDefault: ip(-8)}},
			forUser: true,
			want:    []Variation{{ID: 1, NumericalDefault: ip(3)}, {ID: 2, NumericalDefault: ip(-8)}},
		},
		{
			name:    "numeral supplied zero",
			o:       Option{ID: 7, Type: "numeral", Variations: numeralVars()},
			d:       Data{7: {ID: 1, NumericalDefault: ip(0)}},
			forUser: true,
			want:    []Variation{{ID: 1, NumericalDefault: ip(0)}, {ID: 2, NumericalDefault: ip(4)}},
		},
		{
			name:    "numeral not supplied",
			o:       Option{ID: 7, Type: "numeral", Variations: numeralVars()},
			d:       Data{7: {ID: 1}},
			forUser: true,
			want:    numeralVars(),
		},
		{
			name:    "numeral sets a missing default",
			o:       Option{ID: 7, Type: "numeral", Variations: []Variation{{ID: 1}}},
			d:       Data{7: {ID: 1, NumericalDefault: ip(12)}},
			forUser: true,
			want:    []Variation{{ID: 1, NumericalDefault: ip(12)}},
		},
		{
			name:    "patterns unchanged",
			o:       Option{ID: 7, Type: "patterns", Variations: selectVars()},
			d:       Data{7: {ID: 2, Selected: bp(true), ModelID: ip(1), NumericalDefault: ip(1)}},
			forUser: true,
			want:    selectVars(),
		},
		{
			name:    "unknown type unchanged",
			o:       Option{ID: 7, Type: "widget", Variations: numeralVars()},
			d:       Data{7: {ID: 2, Selected: bp(true), NumericalDefault: ip(1)}},
			forUser: true,
			want:    numeralVars(),
		},
		{
			name:    "not for user material unchanged",
			o:       Option{ID: 7, Type: "material", Variations: materialVars()},
			d:       Data{7: {ID: 1, ModelID: ip(100), SelectedParts: []string{"x"}}},
			forUser: false,
			want:    materialVars(),
		},
		{
			name:    "no entry for the option",
			o:       Option{ID: 7, Type: "select", Variations: selectVars()},
			d:       Data{8: {ID: 2}},
			forUser: true,
			want:    selectVars(),
		},
		{
			name:    "nil data",
			o:       Option{ID: 7, Type: "numeral", Variations: numeralVars()},
			d:       nil,
			forUser: true,
			want:    numeralVars(),
		},
		{
			name:    "nil variations",
			o:       Option{ID: 7, Type: "select"},
			d:       Data{7: {ID: 1}},
			forUser: true,
			want:    nil,
		},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := show(tt.o.Variations)
			dataBefore := showData(tt.d)
			got := Apply(tt.o, tt.d, tt.forUser)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Apply(%s, %s, %t) = %s; want %s", before, dataBefore, tt.forUser, show(got), show(tt.want))
			}
			if after := show(tt.o.Variations); after != before {
				t.Errorf("Apply mutated its input: o.Variations = %s; want %s", after, before)
			}
			scribble(got)
			if after := show(tt.o.Variations); after != before {
				t.Errorf("Apply result shares memory with the option: after writing to the result o.Variations = %s; want %s", after, before)
			}
			if after := showData(tt.d); after != dataBefore {
				t.Errorf("Apply result shares memory with the data: after writing to the result d = %s; want %s", after, dataBefore)
			}
		})
	}
}

func TestApplyReturnsNewSlice(t *testing.T) {
	o := Option{ID: 7, Type: "select", Variations: selectVars()}
	got := Apply(o, nil, false)
	got[0].ID = 42
	if o.Variations[0].ID != 1 {
		t.Errorf("Apply(o, nil, false) shares its backing array: o.Variations[0].ID = %d; want 1", o.Variations[0].ID)
	}
}

// parseOptions are the options Parse is checked against: one of each type.
var parseOptions = []Option{
	{ID: 1, Type: "select", Variations: []Variation{{ID: 10}, {ID: 11}}},
	{ID: 2, Type: "radio", Variations: []Variation{{ID: 20}, {ID: 21}}},
	{ID: 3, Type: "checkbox", Variations: []Variation{{ID: 30}}},
	{ID: 4, Type: "select_thumb", Variations: []Variation{{ID: 40}}},
	{ID: 5, Type: "arrows", Variations: []Variation{{ID: 50}}},
	{ID: 6, Type: "material", Variations: []Variation{{ID: 60}, {ID: 61}}},
	{ID: 7, Type: "text", Variations: []Variation{{ID: 70}}},
	{ID: 8, Type: "numeral", Variations: []Variation{{ID: 80}}},
	{ID: 9, Type: "patterns", Variations: []Variation{{ID: 90}}},
	{ID: 10, Type: "widget", Variations: []Variation{{ID: 100}}},
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Data
	}{
		{"select with selected", `{"1":{"id":11,"selected":true}}`, Data{1: {ID: 11, Selected: bp(true)}}},
		{"radio id only", `{"2":{"id":20}}`, Data{2: {ID: 20}}},
		{"checkbox selected false", `{"3":{"id":30,"selected":false}}`, Data{3: {ID: 30, Selected: bp(false)}}},
		{"select_thumb", `{"4":{"id":40}}`, Data{4: {ID: 40}}},
		{"arrows", `{"5":{"selected":true,"id":50}}`, Data{5: {ID: 50, Selected: bp(true)}}},
		{
			"material all fields",
			`{"6":{"id":61,"model_id":1,"material_id":2,"material_category_id":3,"selected_parts":["seat","back"]}}`,
			Data{6: {ID: 61, ModelID: ip(1), MaterialID: ip(2), MaterialCategoryID: ip(3), SelectedParts: []string{"seat", "back"}}},
		},
		{"material some fields", `{"6":{"id":60,"material_id":9}}`, Data{6: {ID: 60, MaterialID: ip(9)}}},
		{"material id only", `{"6":{"id":60}}`, Data{6: {ID: 60}}},
		{"material empty selected_parts", `{"6":{"id":60,"selected_parts":[]}}`, Data{6: {ID: 60, SelectedParts: []string{}}}},
		{"material largest int", `{"6":{"id":60,"model_id":9223372036854775807}}`, Data{6: {ID: 60, ModelID: ip(9223372036854775807)}}},
		{
			"text all fields",
			`{"7":{"id":70,"text_value":"Hi <b>","custom_color":true,"text_font_size":"12px","text_font_family":"Inter","text_color_category_id":4}}`,
			Data{7: {ID: 70, TextValue: sp("Hi <b>"), CustomColor: bp(true), TextFontSize: sp("12px"), TextFontFamily: sp("Inter"), TextColorCategoryID: ip(4)}},
		},
		{"text some fields", `{"7":{"id":70,"text_value":""}}`, Data{7: {ID: 70, TextValue: sp("")}}},
		{"numeral supplied", `{"8":{"id":80,"numerical_default":-3}}`, Data{8: {ID: 80, NumericalDefault: ip(-3)}}},
		{"numeral not supplied", `{"8":{"id":80}}`, Data{8: {ID: 80}}},
		{"patterns id only", `{"9":{"id":90}}`, Data{9: {ID: 90}}},
		{"unknown type id only", `{"10":{"id":100}}`, Data{10: {ID: 100}}},
		{
			"several options with whitespace",
			" {\n \"6\" : { \"material_id\" : 2 , \"id\" : 60 } ,\t\"1\":{\"id\":10} }\n",
			Data{1: {ID: 10}, 6: {ID: 60, MaterialID: ip(2)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.raw), parseOptions)
			if err != nil {
				t.Fatalf("Parse(%s) error = %v; want nil", tt.raw, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%s) = %s; want %s", tt.raw, showData(got), showData(tt.want))
			}
		})
	}
}

func TestParseRefusals(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		wantPath string
		wantMsg  string // the message must contain this
	}{
		// The whole value.
		{"malformed", `{"1":`, "options", "options must be valid JSON"},
		{"empty input", ``, "options", "options must be valid JSON"},
		{"trailing data", `{"1":{"id":10}} x`, "options", "options must be valid JSON"},
		{"two values", `{"1":{"id":10}}{}`, "options", "options must be valid JSON"},
		{"array", `[{"id":10}]`, "options", "options must be a JSON object keyed by option id, got an array"},
		{"string", `"{\"1\":{\"id\":10}}"`, "options", "got a string"},
		{"null", `null`, "options", "got null"},
		{"number", `12`, "options", "got a number"},
		{"empty object", `{}`, "options", "options must name at least one option"},
		{"empty object with whitespace", " { } ", "options", "options must name at least one option"},

		// Keys.
		{"key not numeric", `{"abc":{"id":10}}`, "options.abc", `option key "abc" must be the id of an option in decimal`},
		{"key zero", `{"0":{"id":10}}`, "options.0", `option key "0"`},
		{"key negative", `{"-1":{"id":10}}`, "options.-1", `option key "-1"`},
		{"key leading zero", `{"01":{"id":10}}`, "options.01", `option key "01"`},
		{"key plus sign", `{"+1":{"id":10}}`, "options.+1", `option key "+1"`},
		{"key with space", `{" 1":{"id":10}}`, "options. 1", `option key " 1"`},
		{"key decimal", `{"1.0":{"id":10}}`, "options.1.0", `option key "1.0"`},
		{"key empty", `{"":{"id":10}}`, "options.", `option key ""`},
		{"key out of range", `{"99999999999999999999":{"id":10}}`, "options.99999999999999999999", `option key "99999999999999999999"`},
		{"key not an option", `{"99":{"id":10}}`, "options.99", "option 99 is not an option of this configurator"},
		{"key given twice", `{"1":{"id":10},"1":{"id":11}}`, "options.1", "option 1 is given more than once"},

		// Values.
		{"value number", `{"1":10}`, "options.1", "option 1 must be a JSON object with an integer id, got a number"},
		{"value array", `{"1":[10]}`, "options.1", "got an array"},
		{"value null", `{"1":null}`, "options.1", "got null"},
		{"value string", `{"1":"10"}`, "options.1", "got a string"},
		{"id missing", `{"1":{}}`, "options.1.id", "option 1 must have an integer id, the id of one of its variations"},
		{"id missing with fields", `{"1":{"selected":true}}`, "options.1.id", "option 1 must have an integer id"},
		{"id null", `{"1":{"id":null}}`, "options.1.id", "id of option 1 must be an integer, got null"},
		{"id string", `{"1":{"id":"10"}}`, "options.1.id", "id of option 1 must be an integer, got a string"},
		{"id boolean", `{"1":{"id":true}}`, "options.1.id", "id of option 1 must be an integer, got a boolean"},
		{"id fraction", `{"1":{"id":1.5}}`, "options.1.id", "id of option 1 must be an integer, got a number with a fraction or exponent (1.5)"},
		{"id point zero", `{"1":{"id":10.0}}`, "options.1.id", "got a number with a fraction or exponent (10.0)"},
		{"id exponent", `{"1":{"id":1e1}}`, "options.1.id", "got a number with a fraction or exponent (1e1)"},
		{"id huge exponent", `{"1":{"id":1e400}}`, "options.1.id", "got a number with a fraction or exponent (1e400)"},
		{"id out of range", `{"1":{"id":99999999999999999999}}`, "options.1.id", "got an integer out of range"},
		{"id zero", `{"1":{"id":0}}`, "options.1.id", "id of option 1 must be a positive integer, got 0"},
		{"id negative", `{"1":{"id":-10}}`, "options.1.id", "id of option 1 must be a positive integer, got -10"},
		{"id given twice", `{"6":{"id":60,"id":61}}`, "options.6.id", "field id of option 6 is given more than once"},
		{"id not a variation", `{"6":{"id":999}}`, "options.6.id", "option 6 has no variation 999"},
		{"id of another option's variation", `{"1":{"id":20}}`, "options.1.id", "option 1 has no variation 20"},
		{"id not a variation of patterns", `{"9":{"id":91}}`, "options.9.id", "option 9 has no variation 91"},

		// Fields not allowed for the type.
		{"select with material_id", `{"1":{"id":10,"material_id":3}}`, "options.1.material_id", `option 1 (select) does not accept field "material_id"; it accepts id, selected`},
		{"radio with text_value", `{"2":{"id":20,"text_value":"x"}}`, "options.2.text_value", `option 2 (radio) does not accept field "text_value"`},
		{"checkbox with numerical_default", `{"3":{"id":30,"numerical_default":1}}`, "options.3.numerical_default", `option 3 (checkbox) does not accept`},
		{"select_thumb with selected_parts", `{"4":{"id":40,"selected_parts":[]}}`, "options.4.selected_parts", `option 4 (select_thumb) does not accept`},
		{"arrows with model_id", `{"5":{"id":50,"model_id":1}}`, "options.5.model_id", `option 5 (arrows) does not accept`},
		{"material with selected", `{"6":{"id":60,"selected":true}}`, "options.6.selected", `option 6 (material) does not accept field "selected"; it accepts id, material_category_id, material_id, model_id, selected_parts`},
		{"material with text_value", `{"6":{"id":60,"text_value":"x"}}`, "options.6.text_value", `option 6 (material) does not accept field "text_value"`},
		{"text with numerical_default", `{"7":{"id":70,"numerical_default":1}}`, "options.7.numerical_default", `option 7 (text) does not accept field "numerical_default"; it accepts custom_color, id, text_color_category_id, text_font_family, text_font_size, text_value`},
		{"text with selected", `{"7":{"id":70,"selected":true}}`, "options.7.selected", `option 7 (text) does not accept field "selected"`},
		{"numeral with text_value", `{"8":{"id":80,"text_value":"1"}}`, "options.8.text_value", `option 8 (numeral) does not accept field "text_value"; it accepts id, numerical_default`},
		{"patterns with selected", `{"9":{"id":90,"selected":true}}`, "options.9.selected", `option 9 (patterns) does not accept field "selected"; it accepts id`},
		{"unknown type with selected", `{"10":{"id":100,"selected":true}}`, "options.10.selected", `option 10 (widget) does not accept field "selected"; it accepts id`},
		{"unknown field", `{"6":{"id":60,"colour":"red"}}`, "options.6.colour", `option 6 (material) does not accept field "colour"`},
		{"field given twice", `{"6":{"id":60,"model_id":1,"model_id":2}}`, "options.6.model_id", "field model_id of option 6 is given more than once"},

		// Fields of the wrong type, or null.
		{"selected string", `{"1":{"id":10,"selected":"true"}}`, "options.1.selected", "selected of option 1 must be a boolean, got a string"},
		{"selected null", `{"1":{"id":10,"selected":null}}`, "options.1.selected", "selected of option 1 must be a boolean, got null"},
		{"selected number", `{"2":{"id":20,"selected":1}}`, "options.2.selected", "selected of option 2 must be a boolean, got a number"},
		{"model_id string", `{"6":{"id":60,"model_id":"3"}}`, "options.6.model_id", "model_id of option 6 must be an integer, got a string"},
		{"model_id null", `{"6":{"id":60,"model_id":null}}`, "options.6.model_id", "model_id of option 6 must be an integer, got null"},
		{"material_id fraction", `{"6":{"id":60,"material_id":1.5}}`, "options.6.material_id", "material_id of option 6 must be an integer, got a number with a fraction or exponent (1.5)"},
		{"material_category_id point zero", `{"6":{"id":60,"material_category_id":3.0}}`, "options.6.material_category_id", "material_category_id of option 6 must be an integer, got a number with a fraction or exponent (3.0)"},
		{"material_category_id object", `{"6":{"id":60,"material_category_id":{}}}`, "options.6.material_category_id", "got an object"},
		{"selected_parts string", `{"6":{"id":60,"selected_parts":"seat"}}`, "options.6.selected_parts", "selected_parts of option 6 must be an array of strings, got a string"},
		{"selected_parts null", `{"6":{"id":60,"selected_parts":null}}`, "options.6.selected_parts", "selected_parts of option 6 must be an array of strings, got null"},
		{"selected_parts number item", `{"6":{"id":60,"selected_parts":["seat",1]}}`, "options.6.selected_parts[1]", "selected_parts of option 6 must be an array of strings, got a number at index 1"},
		{"selected_parts null item", `{"6":{"id":60,"selected_parts":[null]}}`, "options.6.selected_parts[0]", "got null at index 0"},
		{"text_value number", `{"7":{"id":70,"text_value":3}}`, "options.7.text_value", "text_value of option 7 must be a string, got a number"},
		{"text_value null", `{"7":{"id":70,"text_value":null}}`, "options.7.text_value", "text_value of option 7 must be a string, got null"},
		{"custom_color string", `{"7":{"id":70,"custom_color":"yes"}}`, "options.7.custom_color", "custom_color of option 7 must be a boolean, got a string"},
		{"text_font_size number", `{"7":{"id":70,"text_font_size":12}}`, "options.7.text_font_size", "text_font_size of option 7 must be a string, got a number"},
		{"text_font_family null", `{"7":{"id":70,"text_font_family":null}}`, "options.7.text_font_family", "text_font_family of option 7 must be a string, got null"},
		{"text_color_category_id boolean", `{"7":{"id":70,"text_color_category_id":false}}`, "options.7.text_color_category_id", "text_color_category_id of option 7 must be an integer, got a boolean"},
		{"numerical_default exponent", `{"8":{"id":80,"numerical_default":1e2}}`, "options.8.numerical_default", "numerical_default of option 8 must be an integer, got a number with a fraction or exponent (1e2)"},
		{"numerical_default string", `{"8":{"id":80,"numerical_default":"5"}}`, "options.8.numerical_default", "numerical_default of option 8 must be an integer, got a string"},
		{"numerical_default out of range", `{"8":{"id":80,"numerical_default":-99999999999999999999}}`, "options.8.numerical_default", "got an integer out of range"},

		// Order: the first problem in sorted keys, then sorted fields.
		{"first problem by key order", `{"9":{"id":1},"10":{"id":1}}`, "options.10.id", "option 10 has no variation 1"},
		{"bad key before good keys", `{"2":{"id":20},"1x":{"id":1}}`, "options.1x", `option key "1x"`},
		{"first problem by field order", `{"6":{"zzz":1,"model_id":"x","id":999}}`, "options.6.model_id", "model_id of option 6 must be an integer"},
		{"field problem before variation check", `{"6":{"id":999,"selected":true}}`, "options.6.selected", `does not accept field "selected"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.raw), parseOptions)
			if err == nil {
				t.Fatalf("Parse(%s) = %s, nil; want error at %s", tt.raw, showData(got), tt.wantPath)
			}
			if got != nil {
				t.Errorf("Parse(%s) data = %s; want nil on error", tt.raw, showData(got))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%s) error = %T %v; want *Error", tt.raw, err, err)
			}
			if e.Path != tt.wantPath {
				t.Errorf("Parse(%s) error path = %q; want %q", tt.raw, e.Path, tt.wantPath)
			}
			if !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("Parse(%s) error message = %q; want it to contain %q", tt.raw, e.Message, tt.wantMsg)
			}
			if err.Error() != e.Message {
				t.Errorf("Parse(%s) Error() = %q; want the message %q", tt.raw, err.Error(), e.Message)
			}
		})
	}
}

func TestParseSyntaxErrorUnwraps(t *testing.T) {
	_, err := Parse([]byte(`{"1":}`), parseOptions)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("Parse(`{\"1\":}`) error = %v; want one wrapping *json.SyntaxError", err)
	}
}

func TestParseIsDeterministic(t *testing.T) {
	raw := []byte(`{"9":{"id":1},"8":{"id":2},"7":{"id":3},"6":{"id":4},"5":{"id":5}}`)
	_, first := Parse(raw, parseOptions)
	for i := range 50 {
		_, err := Parse(raw, parseOptions)
		if err == nil || first == nil || err.Error() != first.Error() {
			t.Fatalf("Parse(%s) run %d error = %v; want %v", raw, i, err, first)
		}
	}
	if want := "option 5 has no variation 5"; first == nil || first.Error() != want {
		t.Errorf("Parse(%s) error = %v; want %s", raw, first, want)
	}
}

func TestMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		d    Data
		want string
	}{
		{"nil data", nil, `{}`},
		{"empty data", Data{}, `{}`},
		{"id only", Data{12: {ID: 45}}, `{"12":{"id":45}}`},
		{"material", Data{12: {ID: 45, MaterialID: ip(3)}}, `{"12":{"id":45,"material_id":3}}`},
		{
			"all fields sorted",
			Data{1: {ID: 2, Selected: bp(false), ModelID: ip(3), MaterialID: ip(4), MaterialCategoryID: ip(5),
				TextValue: sp("a"), CustomColor: bp(true), TextFontSize: sp("b"), TextFontFamily: sp("c"),
				TextColorCategoryID: ip(6), NumericalDefault: ip(-7), SelectedParts: []string{"x", "y"}}},
			`{"1":{"custom_color":true,"id":2,"material_category_id":5,"material_id":4,"model_id":3,"numerical_default":-7,"selected":false,"selected_parts":["x","y"],"text_color_category_id":6,"text_font_family":"c","text_font_size":"b","text_value":"a"}}`,
		},
		{"option keys in byte order", Data{9: {ID: 1}, 10: {ID: 2}, 100: {ID: 3}}, `{"10":{"id":2},"100":{"id":3},"9":{"id":1}}`},
		{"empty selected_parts kept", Data{6: {ID: 60, SelectedParts: []string{}}}, `{"6":{"id":60,"selected_parts":[]}}`},
		{"strings escaped", Data{7: {ID: 70, TextValue: sp("a\"<b>&\n")}}, `{"7":{"id":70,"text_value":"a\"\u003cb\u003e\u0026\n"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.d.MarshalJSON()
			if err != nil {
				t.Fatalf("MarshalJSON(%v) error = %v; want nil", tt.d, err)
			}
			if string(got) != tt.want {
				t.Errorf("MarshalJSON(%v) = %s; want %s", tt.d, got, tt.want)
			}
			viaJSON, err := json.Marshal(tt.d)
			if err != nil {
				t.Fatalf("json.Marshal(%v) error = %v; want nil", tt.d, err)
			}
			if string(viaJSON) != tt.want {
				t.Errorf("json.Marshal(%v) = %s; want %s", tt.d, viaJSON, tt.want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
	}{
		{"select", `{"1": {"selected": true, "id": 11}}`, `{"1":{"id":11,"selected":true}}`},
		{"material", `{"6":{"selected_parts":["b","a"],"material_id":2,"id":61}}`, `{"6":{"id":61,"material_id":2,"selected_parts":["b","a"]}}`},
		{"material empty parts", `{"6":{"id":60,"selected_parts":[]}}`, `{"6":{"id":60,"selected_parts":[]}}`},
		{"text", `{"7":{"text_value":"é <x>","custom_color":false,"id":70}}`, `{"7":{"custom_color":false,"id":70,"text_value":"é \u003cx\u003e"}}`},
		{"numeral", `{"8":{"numerical_default":0,"id":80}}`, `{"8":{"id":80,"numerical_default":0}}`},
		{"several", `{"9":{"id":90},"10":{"id":100},"1":{"id":10}}`, `{"1":{"id":10},"10":{"id":100},"9":{"id":90}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parsed, err := Parse([]byte(tt.raw), parseOptions)
			if err != nil {
				t.Fatalf("Parse(%s) error = %v; want nil", tt.raw, err)
			}
			canon, err := parsed.MarshalJSON()
			if err != nil {
				t.Fatalf("MarshalJSON(Parse(%s)) error = %v; want nil", tt.raw, err)
			}
			if string(canon) != tt.want {
				t.Errorf("MarshalJSON(Parse(%s)) = %s; want %s", tt.raw, canon, tt.want)
			}
			decoded, err := Decode(canon)
			if err != nil {
				t.Fatalf("Decode(%s) error = %v; want nil", canon, err)
			}
			if !reflect.DeepEqual(decoded, parsed) {
				t.Errorf("Decode(%s) = %s; want %s", canon, showData(decoded), showData(parsed))
			}
			again, err := Parse(canon, parseOptions)
			if err != nil {
				t.Fatalf("Parse(%s) error = %v; want nil", canon, err)
			}
			if !reflect.DeepEqual(again, parsed) {
				t.Errorf("Parse(%s) = %s; want %s", canon, showData(again), showData(parsed))
			}
		})
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Data
	}{
		{"empty object", `{}`, Data{}},
		{"any known fields together", `{"3":{"id":1,"selected":true,"model_id":2,"text_value":"t","numerical_default":4}}`,
			Data{3: {ID: 1, Selected: bp(true), ModelID: ip(2), TextValue: sp("t"), NumericalDefault: ip(4)}}},
		{"option not known to any list", `{"12345":{"id":6789}}`, Data{12345: {ID: 6789}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.raw))
			if err != nil {
				t.Fatalf("Decode(%s) error = %v; want nil", tt.raw, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decode(%s) = %s; want %s", tt.raw, showData(got), showData(tt.want))
			}
		})
	}
}

func TestDecodeRefusals(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		wantPath string
		wantMsg  string
	}{
		{"malformed", `{"1":{"id":1}`, "options", "options must be valid JSON"},
		{"not an object", `[]`, "options", "options must be a JSON object keyed by option id, got an array"},
		{"null", `null`, "options", "got null"},
		{"bad key", `{"01":{"id":1}}`, "options.01", `option key "01"`},
		{"key given twice", `{"1":{"id":1},"1":{"id":1}}`, "options.1", "option 1 is given more than once"},
		{"value not an object", `{"1":1}`, "options.1", "option 1 must be a JSON object with an integer id, got a number"},
		{"missing id", `{"1":{"model_id":1}}`, "options.1.id", "option 1 must have an integer id"},
		{"id zero", `{"1":{"id":0}}`, "options.1.id", "id of option 1 must be a positive integer, got 0"},
		{"unknown field", `{"1":{"id":1,"colour":"red"}}`, "options.1.colour", `option 1 has unknown field "colour"; known fields are custom_color, id,`},
		{"wrong type", `{"1":{"id":1,"custom_color":1}}`, "options.1.custom_color", "custom_color of option 1 must be a boolean, got a number"},
		{"null field", `{"1":{"id":1,"text_value":null}}`, "options.1.text_value", "text_value of option 1 must be a string, got null"},
		{"fraction", `{"1":{"id":1,"model_id":2.0}}`, "options.1.model_id", "got a number with a fraction or exponent (2.0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.raw))
			if err == nil {
				t.Fatalf("Decode(%s) = %s, nil; want error at %s", tt.raw, showData(got), tt.wantPath)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode(%s) error = %T %v; want *Error", tt.raw, err, err)
			}
			if e.Path != tt.wantPath {
				t.Errorf("Decode(%s) error path = %q; want %q", tt.raw, e.Path, tt.wantPath)
			}
			if !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("Decode(%s) error message = %q; want it to contain %q", tt.raw, e.Message, tt.wantMsg)
			}
		})
	}
}

func TestDigest(t *testing.T) {
	mustParse := func(raw string) Data {
		t.Helper()
		d, err := Parse([]byte(raw), parseOptions)
		if err != nil {
			t.Fatalf("Parse(%s) error = %v; want nil", raw, err)
		}
		return d
	}
	base := `{"6":{"id":60,"material_id":3,"selected_parts":["a","b"]},"1":{"id":10}}`
	tests := []struct {
		name  string
		other string
		equal bool
	}{
		{"same text", base, true},
		{"different key order", `{"1":{"id":10},"6":{"selected_parts":["a","b"],"material_id":3,"id":60}}`, true},
		{"different whitespace", "{ \"1\" : {\"id\": 10},\n\t\"6\": {\"id\": 60, \"material_id\": 3, \"selected_parts\": [ \"a\", \"b\" ]} }", true},
		{"different value", `{"6":{"id":60,"material_id":4,"selected_parts":["a","b"]},"1":{"id":10}}`, false},
		{"different parts order", `{"6":{"id":60,"material_id":3,"selected_parts":["b","a"]},"1":{"id":10}}`, false},
		{"field missing", `{"6":{"id":60,"selected_parts":["a","b"]},"1":{"id":10}}`, false},
		{"empty parts versus no parts", `{"6":{"id":60,"material_id":3,"selected_parts":[]},"1":{"id":10}}`, false},
		{"option missing", `{"6":{"id":60,"material_id":3,"selected_parts":["a","b"]}}`, false},
		{"other variation", `{"6":{"id":61,"material_id":3,"selected_parts":["a","b"]},"1":{"id":10}}`, false},
	}
	want := mustParse(base).Digest()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustParse(tt.other).Digest()
			if (got == want) != tt.equal {
				t.Errorf("Digest(%s) = %s; want equal to Digest(%s) = %s: %t", tt.other, got, base, want, tt.equal)
			}
		})
	}
	t.Run("hex sha256 of canonical json", func(t *testing.T) {
		d := mustParse(base)
		canon, _ := d.MarshalJSON()
		sum := sha256.Sum256(canon)
		if got, w := d.Digest(), hex.EncodeToString(sum[:]); got != w {
			t.Errorf("Digest(%s) = %s; want %s", canon, got, w)
		}
	})
}
