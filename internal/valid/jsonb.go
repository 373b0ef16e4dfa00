package valid

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Stored puts raw, a valid JSON value, in the form PostgreSQL's jsonb
// keeps it, compacted: object keys sorted by length and then by bytes,
// the last of duplicate keys, numbers in plain notation with the scale
// they were written with (1.50 stays 1.50, 1e2 becomes 100, -0 becomes
// 0), strings with only the escapes jsonb writes (quote, backslash, \b \f
// \n \r \t and \u00XX for other control characters). The service stores
// every JSON object clients write in this form, on SQLite too, so that
// an object reads back the same on both databases and in every answer
// (the one to the write, its event, later reads) whatever the client's
// spelling. It refuses what jsonb cannot hold: \u0000, unpaired
// surrogates, invalid UTF-8, exponents beyond ±1000.
func Stored(raw []byte) (json.RawMessage, error) {
	s := storer{in: raw, out: make([]byte, 0, len(raw))}
	s.space()
	if err := s.value(&s.out); err != nil {
		return nil, err
	}
	if s.space(); s.i != len(s.in) {
		return nil, errors.New("text after the JSON value")
	}
	return s.out, nil
}

// maxExponent bounds the exponents of numbers in stored JSON: 1e1000 is
// a thousand digits in jsonb's plain notation, and a larger one could
// grow a few bytes of input into megabytes.
const maxExponent = 1000

// storer reads JSON from in and writes its stored form.
type storer struct {
	in  []byte
	i   int
	out []byte
}

func (s *storer) space() {
	for s.i < len(s.in) && strings.IndexByte(" \t\n\r", s.in[s.i]) >= 0 {
		s.i++
	}
}

var errSyntax = errors.New("invalid JSON")

// value writes the value at s.i to *out.
func (s *storer) value(out *[]byte) error {
	if s.i >= len(s.in) {
		return errSyntax
	}
	switch c := s.in[s.i]; {
	case c == '{':
		return s.object(out)
	case c == '[':
		start := len(*out)
		*out = append(*out, '[')
		err := s.items(']', func() error {
			if len(*out) > start+1 {
				*out = append(*out, ',')
			}
			return s.value(out)
		})
		*out = append(*out, ']')
		return err
	case c == '"':
		str, err := s.string()
		if err != nil {
			return err
		}
		*out = appendStored(*out, str)
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(out)
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(s.in[s.i:], []byte(lit)) {
			s.i += len(lit)
			*out = append(*out, lit...)
			return nil
		}
	}
	return errSyntax
}

// member is a key of an object with its stored value.
type member struct {
	key   string
	value []byte
}

// object writes the object at s.i: its members in jsonb's key order, the
// last of each key.
func (s *storer) object(out *[]byte) error {
	members, err := s.members()
	if err != nil {
		return err
	}
	// A stable sort keeps duplicates in their order; the last one wins.
	slices.SortStableFunc(members, func(a, b member) int {
		return cmp.Or(cmp.Compare(len(a.key), len(b.key)), strings.Compare(a.key, b.key))
	})
	start := len(*out)
	*out = append(*out, '{')
	for i, m := range members {
		if i+1 < len(members) && members[i+1].key == m.key {
			continue
		}
		if len(*out) > start+1 {
			*out = append(*out, ',')
		}
		*out = appendStored(*out, m.key)
		*out = append(*out, ':')
		*out = append(*out, m.value...)
	}
	*out = append(*out, '}')
	return nil
}

// members reads the members of the object at s.i, in their order.
func (s *storer) members() ([]member, error) {
	var members []member
	err := s.items('}', func() error {
		if s.i >= len(s.in) || s.in[s.i] != '"' {
			return errSyntax
		}
		key, err := s.string()
		if err != nil {
			return err
		}
		s.space()
		if s.i >= len(s.in) || s.in[s.i] != ':' {
			return errSyntax
		}
		s.i++
		s.space()
		var v []byte
		if err := s.value(&v); err != nil {
			return err
		}
		members = append(members, member{key, v})
		return nil
	})
	return members, err
}

// items reads the comma-separated items of the array or object at s.i,
// up to its closing byte, each with item.
func (s *storer) items(closing byte, item func() error) error {
	s.i++
	s.space()
	if s.i < len(s.in) && s.in[s.i] == closing {
		s.i++
		return nil
	}
	for {
		s.space()
		if err := item(); err != nil {
			return err
		}
		s.space()
		if s.i >= len(s.in) {
			return errSyntax
		}
		s.i++
		switch s.in[s.i-1] {
		case ',':
		case closing:
			return nil
		default:
			return errSyntax
		}
	}
}

// string reads the string at s.i and returns its text.
func (s *storer) string() (string, error) {
	s.i++
	var b []byte
	for s.i < len(s.in) {
		c := s.in[s.i]
		switch {
		case c == '"':
			s.i++
			return string(b), nil
		case c < 0x20:
			return "", errSyntax
		case c == '\\':
			var err error
			if b, err = s.escape(b); err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			s.i++
		default:
			r, n := utf8.DecodeRune(s.in[s.i:])
			if r == utf8.RuneError && n <= 1 {
				return "", errors.New("invalid UTF-8")
			}
			b = append(b, s.in[s.i:s.i+n]...)
			s.i += n
		}
	}
	return "", errSyntax
}

// escape appends to b the character of the escape at s.i.
func (s *storer) escape(b []byte) ([]byte, error) {
	if s.i+1 >= len(s.in) {
		return b, errSyntax
	}
	e := s.in[s.i+1]
	s.i += 2
	if i := strings.IndexByte("\"\\/bfnrt", e); i >= 0 {
		return append(b, "\"\\/\b\f\n\r\t"[i]), nil
	}
	if e != 'u' {
		return b, errSyntax
	}
	r, err := s.unicode()
	return utf8.AppendRune(b, r), err
}

// unicode reads the rest of a \u escape, and of the \u escape of a low
// surrogate after a high one, and returns its character.
func (s *storer) unicode() (rune, error) {
	r, err := s.hex()
	switch {
	case err != nil:
		return 0, err
	case r == 0:
		return 0, errors.New(`\u0000 cannot be stored`)
	case utf16.IsSurrogate(r) && r < 0xDC00:
		if s.i+1 >= len(s.in) || s.in[s.i] != '\\' || s.in[s.i+1] != 'u' {
			return 0, errors.New("a high surrogate must be followed by a low surrogate")
		}
		s.i += 2
		lo, err := s.hex()
		if err != nil {
			return 0, err
		}
		if r = utf16.DecodeRune(r, lo); r == utf8.RuneError {
			return 0, errors.New("a high surrogate must be followed by a low surrogate")
		}
	case utf16.IsSurrogate(r):
		return 0, errors.New("a low surrogate must follow a high surrogate")
	}
	return r, nil
}

// hex reads the four hex digits of a \u escape.
func (s *storer) hex() (rune, error) {
	if s.i+4 > len(s.in) {
		return 0, errSyntax
	}
	v, err := strconv.ParseUint(string(s.in[s.i:s.i+4]), 16, 32)
	if err != nil {
		return 0, errSyntax
	}
	s.i += 4
	return rune(v), nil
}

// appendStored writes str as jsonb writes a string.
func appendStored(b []byte, str string) []byte {
	b = append(b, '"')
	for i := 0; i < len(str); i++ {
		c := str[i]
		if e := strings.IndexByte("\"\\\b\f\n\r\t", c); e >= 0 {
			b = append(b, '\\', "\"\\bfnrt"[e])
		} else if c < 0x20 {
			b = fmt.Appendf(b, `\u%04x`, c)
		} else {
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// number writes the number at s.i as PostgreSQL's numeric writes it:
// plain notation, as many decimals as the number was written with less
// its exponent (none below zero), no sign on zero.
func (s *storer) number(out *[]byte) error {
	start := s.i
	neg := s.in[s.i] == '-'
	if neg {
		s.i++
	}
	whole := s.digits()
	if len(whole) == 0 || (len(whole) > 1 && whole[0] == '0') {
		return errSyntax
	}
	var frac []byte
	if s.i < len(s.in) && s.in[s.i] == '.' {
		s.i++
		if frac = s.digits(); len(frac) == 0 {
			return errSyntax
		}
	}
	exp := 0
	if s.i < len(s.in) && (s.in[s.i] == 'e' || s.in[s.i] == 'E') {
		s.i++
		from := s.i
		if s.i < len(s.in) && (s.in[s.i] == '+' || s.in[s.i] == '-') {
			s.i++
		}
		if len(s.digits()) == 0 {
			return errSyntax
		}
		e, err := strconv.Atoi(string(s.in[from:s.i]))
		if err != nil || e > maxExponent || e < -maxExponent {
			return fmt.Errorf("the exponent of %.40s is beyond ±%d", s.in[start:s.i], maxExponent)
		}
		exp = e
	}
	*out = appendPlain(*out, neg, whole, frac, exp)
	return nil
}

// digits reads the decimal digits at s.i.
func (s *storer) digits() []byte {
	from := s.i
	for s.i < len(s.in) && s.in[s.i] >= '0' && s.in[s.i] <= '9' {
		s.i++
	}
	return s.in[from:s.i]
}

// appendPlain appends the number whole.frac × 10^exp (negative if neg)
// in plain notation, with the scale it was written with.
func appendPlain(out []byte, neg bool, whole, frac []byte, exp int) []byte {
	all := append(append([]byte{}, whole...), frac...)
	point := len(whole) + exp // digits of all before the decimal point
	scale := max(0, len(frac)-exp)
	digit := func(i int) byte {
		if i < 0 || i >= len(all) {
			return '0'
		}
		return all[i]
	}
	var n []byte
	for i := 0; i < point; i++ {
		if d := digit(i); d != '0' || len(n) > 0 {
			n = append(n, d)
		}
	}
	if len(n) == 0 {
		n = append(n, '0')
	}
	if scale > 0 {
		n = append(n, '.')
		for i := point; i < point+scale; i++ {
			n = append(n, digit(i))
		}
	}
	if neg && bytes.ContainsAny(n, "123456789") {
		out = append(out, '-')
	}
	return append(out, n...)
}
