package scalar

import (
	"bytes"
	"encoding/json"
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
