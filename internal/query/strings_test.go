package query

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestUnmarshalStrings holds unmarshalStrings to json.Unmarshal: the same
// slice (nil, empty or not) and an error exactly when it errs, on the
// arrays the service stores, on every kind of text it leaves to
// json.Unmarshal, on malformed JSON and on generated arrays.
func TestUnmarshalStrings(t *testing.T) {
	cases := []string{
		`null`, ` null `, `nul`, `nullx`, `[]`, ` [ ] `, `[`, `]`, `[]]`, `[] x`, `{}`, `"a"`, `1`, `true`, ``, ` `,
		`["https://cdn.example.com/print/40766-front.png", "https://cdn.example.com/print/40766-back.png"]`,
		`["a","b"]`, "[\n\t\"a\" ,\r\n \"b\"\n]", `[""]`, `["", ""]`, `["a",]`, `[,"a"]`, `["a" "b"]`, `["a"`, `["a`, `[a]`,
		`["a\"b"]`, `["a\\b"]`, `["\u00e9"]`, `["é"]`, "[\"\xff\"]", "[\"a\x01\"]", `["\u2028"]`, "[\"\u2028\"]",
		`[1]`, `["a", 1]`, `["a", null]`, `[null]`, `[["a"]]`, `["a"] ["b"]`, `["a"]null`, `[ "a" ] `,
	}
	g := rand.New(rand.NewPCG(27, 4))
	alphabet := []string{"a", "Z", "0", " ", "/", ":", ".", "-", `"`, `\`, `\"`, `\n`, `\u0041`, "é", "\xff", "\t", ",", "[", "]"}
	for range 3000 {
		var b strings.Builder
		b.WriteString([]string{"[", " [", "[\n"}[g.IntN(3)])
		for k := range g.IntN(4) {
			if k > 0 {
				b.WriteString([]string{",", ", ", " ,", ""}[g.IntN(4)])
			}
			b.WriteByte('"')
			for range g.IntN(6) {
				if g.IntN(5) == 0 {
					b.WriteString(alphabet[g.IntN(len(alphabet))])
				} else {
					b.WriteString(alphabet[g.IntN(7)])
				}
			}
			b.WriteByte('"')
		}
		b.WriteString([]string{"]", " ]", "]\n", ""}[g.IntN(4)])
		cases = append(cases, b.String())
	}
	plain := 0
	for _, c := range cases {
		var want, got []string
		errWant := json.Unmarshal([]byte(c), &want)
		errGot := unmarshalStrings([]byte(c), &got)
		if (errWant == nil) != (errGot == nil) || errWant != nil && errWant.Error() != errGot.Error() {
			t.Fatalf("%q: error %v; json.Unmarshal %v", c, errGot, errWant)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %#v; json.Unmarshal %#v", c, got, want)
		}
		if _, ok := plainStrings([]byte(c)); ok {
			plain++
		}
	}
	// The generated arrays must reach the fast path, or it is untested.
	if plain < len(cases)/4 {
		t.Fatalf("only %d of %d cases read as plain", plain, len(cases))
	}
}
