package rest

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/scalar"
)

// The hot answer shapes (materials, orders and their page, options with
// their variations) write themselves: encoding/json spends most of a list's
// encoding time in reflection and in re-scanning the stored raw JSON of
// orders and options, which these appenders copy after a cheap check.
// Their appendJSON methods are generated from the struct types in
// present.go (rest/gen, encode_gen.go), so the struct tags stay the one
// description of the v1 shapes; each writes exactly the bytes
// encoding/json writes for its type (with HTML escaping off, as writeBody
// encodes), which encode_test.go checks on generated values. This file
// holds the helpers they call.
//
//go:generate go run ./gen

// appender is a v1 shape that writes its own JSON. It returns false where
// encoding/json would fail (a NaN or infinite number).
type appender interface {
	appendJSON(b []byte) ([]byte, bool)
}

// fastShape returns v as an appender when its type is one of the shapes
// above. The list is explicit rather than an interface check, so that a
// type embedding one of them (the share link's option, which replaces its
// parameter_list) never borrows an appender that leaves its own fields
// out.
func fastShape(v any) appender {
	switch v := v.(type) {
	case materialJSON:
		return v
	case orderJSON:
		return v
	case orderPageJSON:
		return v
	case optionJSON:
		return v
	case each[*ent.Material, materialJSON]:
		return v
	case each[*ent.ConfiguratorOption, optionJSON]:
		return v
	}
	return nil
}

// records is a list of records that writes its own JSON (each), the data
// of a page envelope: encoding/json and the appenders both write it as
// an array.
type records interface {
	appender
	json.Marshaler
}

// each is a list of records presented one at a time as the list is
// written: every record's v1 shape (present) is appended as soon as it is
// made, so an answer needs no slice of shapes beside its records (for a
// page of 50 materials, 10 KB less to allocate and copy per request). It
// writes what encoding/json writes for presentAll(items, present): an
// array, empty rather than null.
type each[T any, J appender] struct {
	items   []T
	present func(T) J
}

// presentEach is the list of items as each presents it.
func presentEach[T any, J appender](items []T, present func(T) J) each[T, J] {
	return each[T, J]{items: items, present: present}
}

func (l each[T, J]) appendJSON(b []byte) ([]byte, bool) {
	return appendEach(b, l.items, l.present)
}

// appendEach writes present of every item as a JSON array.
func appendEach[T any, J appender](b []byte, items []T, present func(T) J) ([]byte, bool) {
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = present(it).appendJSON(b); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// MarshalJSON writes the list through encoding/json, as writeBody's
// encoder would write presentAll(items, present) (no HTML escaping): the
// answer of a value an appender refuses, and the reference the appenders
// are tested against.
func (l each[T, J]) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(presentAll(l.items, l.present)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// array is a slice of a shape that has an appender, written as an array.
type array[J appender] []J

func (l array[J]) appendJSON(b []byte) ([]byte, bool) {
	if l == nil {
		return append(b, "null"...), true
	}
	return appendEach(b, l, func(v J) J { return v })
}

// appendKeyStrings writes a list of strings, null when nil.
func appendKeyStrings(b []byte, key string, xs []string) []byte {
	b = append(b, key...)
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendKeyPtr writes *p with write, null when p is nil.
func appendKeyPtr[T any](b []byte, key string, p *T, write func([]byte, T) []byte) []byte {
	b = append(b, key...)
	if p == nil {
		return append(b, "null"...)
	}
	return write(b, *p)
}

func appendKeyString(b []byte, key, s string) []byte {
	return appendString(append(b, key...), s)
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

func appendKeyBool(b []byte, key string, v bool) []byte {
	return strconv.AppendBool(append(b, key...), v)
}

// appendKeyFloat writes f as encoding/json does (ES6 number formatting);
// NaN and infinities are not JSON, and clear ok.
func appendKeyFloat(b []byte, key string, f float64, ok *bool) []byte {
	b = append(b, key...)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		*ok = false
		return b
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07, as encoding/json writes it: 1e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendKeyRaw writes stored raw JSON as encoding/json writes a
// json.RawMessage: compacted, null when empty (scalar.AppendObject).
func appendKeyRaw(b []byte, key string, raw json.RawMessage) []byte {
	return scalar.AppendObject(append(b, key...), raw)
}

// appendString writes s as a JSON string as encoding/json does without
// HTML escaping: quotes, backslashes and control characters escaped,
// invalid UTF-8 as U+FFFD, and U+2028 and U+2029 escaped. Runs of eight
// bytes that need none of it (plain8), most of an order's text (URLs,
// timestamps), are passed over at once.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plain8(s[i:]) {
			i += 8
		}
		if i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			if e := strings.IndexByte("\\\"\b\f\n\r\t", c); e >= 0 {
				b = append(b, '\\', "\\\"bfnrt"[e])
			} else {
				b = appendU(b, rune(c))
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			// Invalid UTF-8 is written as U+FFFD (\ufffd).
			b = appendU(append(b, s[start:i]...), r)
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain8 tells whether the first eight bytes of s (at least eight) are
// all printable ASCII other than the quote and the backslash, the bytes
// appendString copies as they are. It reads them as one little-endian
// word x (SWAR): with no high bit set in x, a byte below n sets the high
// bit of its byte of x - n*ones and a byte from n up does not, unless a
// lower byte borrowed (which only marks a word already marked); the
// bytes equal to '"' or '\\' are the zero bytes of the XORs, below 1.
func plain8(s string) bool {
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := x^('"'*ones), x^('\\'*ones)
	return (x|(x-0x20*ones)|(q-ones)|(bs-ones))&highs == 0
}

// appendU writes the escape \uXXXX of r, a rune of the Basic Multilingual
// Plane.
func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

const hexDigits = "0123456789abcdef"
