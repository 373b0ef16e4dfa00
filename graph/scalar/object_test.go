package scalar

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAppendObject checks that AppendObject writes what json.Compact
// writes, for objects in PostgreSQL's jsonb text form and in others:
// escaped quotes and backslashes before a string's end, white space in
// strings, nesting.
func TestAppendObject(t *testing.T) {
	for _, raw := range []string{
		`{}`,
		`{"a": 1, "b": [1, 2, {"c": null}], "d": {"e": true}}`,
		"{\n\t\"a\" :\r\n 1 ,\"b\":\"x y\"  }",
		`{"q": "say \"hi\" ", "k": "v"}`,
		`{"bs": "ends in a backslash \\", "n": 1}`,
		`{"bs2": "\\\" still in", "x": "\\\\"}`,
		`{"u": "\u00e9 \" \\ \/ \n", "e": "", "sp": " "}`,
		`[ "a" , "b" ]`,
		`"just a string with \" and spaces "`,
	} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(raw)); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := AppendObject([]byte("prefix"), json.RawMessage(raw)); string(got) != "prefix"+want.String() {
			t.Errorf("AppendObject(%s) = %s; want %s", raw, got, want.String())
		}
	}
	if got := AppendObject(nil, nil); string(got) != "null" {
		t.Errorf("AppendObject(nil) = %s; want null", got)
	}
}

// TestAppendObjectGenerated holds AppendObject to json.Compact on
// generated objects, written compact, in PostgreSQL's jsonb text form
// (a space after every colon and comma) and indented: strings of up to
// thirty pieces, with quotes, backslashes (escaped ones before a
// string's end), escapes and non-ASCII text at every position.
func TestAppendObjectGenerated(t *testing.T) {
	g := rand.New(rand.NewPCG(27, 5))
	pieces := []string{"a", "Z", "0", " ", "/", ":", "-", `"`, `\`, "\n", "\t", "é", "€", "\u2028", "<", "{", "}", "[", ",", "\x01"}
	str := func() string {
		var s strings.Builder
		for range g.IntN(30) {
			if g.IntN(4) == 0 {
				s.WriteString(pieces[g.IntN(len(pieces))])
			} else {
				s.WriteString(pieces[g.IntN(3)])
			}
		}
		return s.String()
	}
	var value func(depth int) any
	object := func(depth int) map[string]any {
		m := map[string]any{}
		for range g.IntN(5) {
			m[str()] = value(depth + 1)
		}
		return m
	}
	value = func(depth int) any {
		switch k := g.IntN(8); {
		case k < 3 || depth > 2:
			return str()
		case k == 3:
			return g.Float64() * 100
		case k == 4:
			return nil
		case k == 5:
			l := make([]any, g.IntN(4))
			for i := range l {
				l[i] = value(depth + 1)
			}
			return l
		}
		return object(depth)
	}
	for range 3000 {
		compact, err := json.Marshal(object(0))
		if err != nil {
			t.Fatal(err)
		}
		var indented bytes.Buffer
		if err := json.Indent(&indented, compact, " ", "\t"); err != nil {
			t.Fatal(err)
		}
		// jsonb's text form: rewrite the compact separators outside strings.
		var jsonb []byte
		in := false
		for i := 0; i < len(compact); i++ {
			c := compact[i]
			jsonb = append(jsonb, c)
			switch {
			case in && c == '\\':
				i++
				jsonb = append(jsonb, compact[i])
			case c == '"':
				in = !in
			case !in && (c == ':' || c == ','):
				jsonb = append(jsonb, ' ')
			}
		}
		for _, raw := range [][]byte{compact, indented.Bytes(), jsonb} {
			var want bytes.Buffer
			if err := json.Compact(&want, raw); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			if got := AppendObject([]byte("prefix"), raw); string(got) != "prefix"+want.String() {
				t.Fatalf("AppendObject(%s)\n = %s\nwant %s", raw, got, want.String())
			}
		}
	}
}
