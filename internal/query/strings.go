package query

import (
	"bytes"
	"encoding/json"
)

// unmarshalStrings decodes a JSON array of strings into xs as
// json.Unmarshal does, which costs a print map (two URLs an order) about
// as much as reading the rest of the order's row: its reflection, a
// validating pre-scan and a string an element. The arrays the service
// stores are plain (strings without escapes or non-ASCII text), and those
// are read here (the closing quote found by IndexByte, the text checked
// against a table), into one string the elements share; anything
// else (escapes, other text, other values, malformed JSON) goes to
// json.Unmarshal, so the result and the errors are always its own.
func unmarshalStrings(b []byte, xs *[]string) error {
	if got, ok := plainStrings(b); ok {
		*xs = got
		return nil
	}
	return json.Unmarshal(b, xs)
}

// plainStrings reads b when it is null or an array of plain strings
// (ASCII, no escapes, no control characters), white space around the
// tokens allowed; ok is false for anything else. null is a nil slice, as
// json.Unmarshal leaves a nil slice for it.
func plainStrings(b []byte) (xs []string, ok bool) {
	i := skipSpace(b, 0)
	if i+4 <= len(b) && string(b[i:i+4]) == "null" {
		return nil, skipSpace(b, i+4) == len(b)
	}
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	// The elements' bounds, found before any allocation, as pairs.
	var bounds [16]int
	spans := bounds[:0]
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return []string{}, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		start := i + 1
		end := bytes.IndexByte(b[start:], '"')
		if end < 0 {
			return nil, false
		}
		i = start + end
		for _, c := range b[start:i] {
			if !plainByte[c] {
				return nil, false
			}
		}
		spans = append(spans, start, i)
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == ']' {
			break
		}
		if b[i] != ',' {
			return nil, false
		}
		i = skipSpace(b, i+1)
	}
	if skipSpace(b, i+1) != len(b) {
		return nil, false
	}
	s := string(b)
	xs = make([]string, len(spans)/2)
	for k := range xs {
		xs[k] = s[spans[2*k]:spans[2*k+1]]
	}
	return xs, true
}

// plainByte tells the bytes a plain string holds as they are: printable
// ASCII but the backslash (the quote ends it).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '\\'
	}
	return t
}()

// skipSpace returns the index of the first byte of b from i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
