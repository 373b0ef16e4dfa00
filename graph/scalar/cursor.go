package scalar

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"reflect"
	"time"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// MaxCursorBytes bounds a cursor as a client sends it (base64 text). The
// longest a connection writes carries a sort key of valid.MaxName
// runes of up to 4 bytes, about 1,400 characters of base64 (valid.MaxName); anything
// longer was not written here and is refused before it is decoded.
const MaxCursorBytes = 2048

// SortKind is the kind of value a connection's cursor carries besides the
// record's id: that of the field the connection is sorted by.
type SortKind uint8

// The kinds of sort keys; AnyKind is any of the others (the Cursor
// scalar, which does not know the connection's sort).
const (
	AnyKind SortKind = iota
	IntKind
	FloatKind
	StringKind
	BoolKind
	TimeKind
	// NoKind is a sort key of a Go type no cursor carries: every cursor
	// of such a connection is refused.
	NoKind
)

// KindOf is the SortKind of a sort key's value v (a record's field).
func KindOf(v any) SortKind {
	if _, ok := v.(time.Time); ok {
		return TimeKind
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return IntKind
	case reflect.Float32, reflect.Float64:
		return FloatKind
	case reflect.String:
		return StringKind
	case reflect.Bool:
		return BoolKind
	}
	return NoKind
}

// MarshalCursor writes a cursor as entgql does: base64 of its msgpack
// {"i": id, "v": sort key}.
func MarshalCursor(c entgql.Cursor[int]) graphql.Marshaler { return c }

// UnmarshalCursor reads an after or before argument (ReadCursor, of any
// sort key's kind; the endpoint checks the kind against the connection's
// sort before the operation runs). entgql's own decoder reads any msgpack
// value, nested as deep as the client likes, and hands it to the
// database.
func UnmarshalCursor(v any) (entgql.Cursor[int], error) {
	s, ok := v.(string)
	if !ok {
		return entgql.Cursor[int]{}, apperr.Field("", "{} must be a cursor (a string), got %s", kind(v))
	}
	return ReadCursor("", s, AnyKind)
}

// ReadCursor reads field as a cursor in the one shape a connection sorted
// by a key of kind want writes: at most MaxCursorBytes of unpadded base64
// of a msgpack map of "i", an id, and "v", a value of kind want (or nil;
// entgql leaves it out when it is its type's zero value), its text valid
// UTF-8 without NUL (valid.Text). Nothing in it
// is allocated beyond its own bytes: no nested value is decoded, since
// none is accepted. Anything else is BAD_REQUEST about field.
func ReadCursor(field, s string, want SortKind) (entgql.Cursor[int], error) {
	var c entgql.Cursor[int]
	bad := func(why string) (entgql.Cursor[int], error) {
		return entgql.Cursor[int]{}, apperr.Field(field, "{} is not a cursor of this connection: %s; send the cursor of an edge or pageInfo as it was received", why)
	}
	if s == "" {
		return bad("it is empty")
	}
	if len(s) > MaxCursorBytes {
		return bad("it is longer than any cursor the service writes")
	}
	b, err := base64.RawStdEncoding.Strict().DecodeString(s)
	if err != nil {
		return bad("it is not base64")
	}
	r := mpReader{b: b}
	entries := r.byte()
	if entries != 0x81 && entries != 0x82 || r.str() != "i" {
		return bad("it does not start with an id")
	}
	id, ok := r.int()
	if !ok || id < 1 {
		return bad("its id is not a positive integer")
	}
	// entgql omits a sort key of its type's zero value (0, "", false).
	if entries == 0x82 && r.str() != "v" {
		return bad("its second entry is not a sort key")
	}
	if entries == 0x82 {
		c.Value, ok = r.value(want)
	}
	if !ok || r.fail || len(r.b) > 0 {
		return bad("its sort key is not one of this sort")
	}
	if s, isText := c.Value.(string); isText && valid.Text(field, s) != nil {
		return bad("its sort key is not valid UTF-8 text without NUL")
	}
	c.ID = int(id)
	return c, nil
}

// mpReader reads the scalars of msgpack from b; a read past its end sets
// fail.
type mpReader struct {
	b    []byte
	fail bool
}

func (r *mpReader) next(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.fail, r.b = true, nil
		return make([]byte, min(max(n, 0), 16))
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *mpReader) byte() byte { return r.next(1)[0] }

// str reads a string of any msgpack format; it is "" when there is none.
func (r *mpReader) str() string {
	if len(r.b) == 0 {
		r.fail = true
		return ""
	}
	var n int
	switch c := r.b[0]; {
	case c >= 0xa0 && c <= 0xbf:
		r.next(1)
		n = int(c & 0x1f)
	case c == 0xd9:
		n = int(r.next(2)[1])
	case c == 0xda:
		n = int(binary.BigEndian.Uint16(r.next(3)[1:]))
	case c == 0xdb:
		n = int(binary.BigEndian.Uint32(r.next(5)[1:]))
	default:
		return ""
	}
	return string(r.next(n))
}

// int reads an integer of any msgpack format that fits in an int64.
func (r *mpReader) int() (int64, bool) {
	if len(r.b) == 0 {
		return 0, false
	}
	switch c := r.b[0]; {
	case c <= 0x7f || c >= 0xe0:
		return int64(int8(r.byte())), true
	case c == 0xcc:
		return int64(r.next(2)[1]), !r.fail
	case c == 0xcd:
		return int64(binary.BigEndian.Uint16(r.next(3)[1:])), !r.fail
	case c == 0xce:
		return int64(binary.BigEndian.Uint32(r.next(5)[1:])), !r.fail
	case c == 0xcf:
		u := binary.BigEndian.Uint64(r.next(9)[1:])
		return int64(u), !r.fail && u <= math.MaxInt64
	case c == 0xd0:
		return int64(int8(r.next(2)[1])), !r.fail
	case c == 0xd1:
		return int64(int16(binary.BigEndian.Uint16(r.next(3)[1:]))), !r.fail
	case c == 0xd2:
		return int64(int32(binary.BigEndian.Uint32(r.next(5)[1:]))), !r.fail
	case c == 0xd3:
		return int64(binary.BigEndian.Uint64(r.next(9)[1:])), !r.fail
	}
	return 0, false
}

// value reads a sort key of kind want (any scalar kind for AnyKind), or
// nil.
func (r *mpReader) value(want SortKind) (any, bool) {
	if len(r.b) == 0 {
		return nil, false
	}
	c := r.b[0]
	got := NoKind
	switch {
	case c == 0xc0:
		r.next(1)
		return nil, true
	case c <= 0x7f || c >= 0xe0 || c >= 0xcc && c <= 0xcf || c >= 0xd0 && c <= 0xd3:
		got = IntKind
	case c == 0xca || c == 0xcb:
		got = FloatKind
	case c >= 0xa0 && c <= 0xbf || c >= 0xd9 && c <= 0xdb:
		got = StringKind
	case c == 0xc2 || c == 0xc3:
		got = BoolKind
	case c == 0xd6 || c == 0xd7 || c == 0xc7:
		got = TimeKind
	}
	if got == NoKind || want != AnyKind && want != got {
		return nil, false
	}
	return r.scalar(got)
}

// scalar reads a value of kind k, whose first byte value has checked.
func (r *mpReader) scalar(k SortKind) (any, bool) {
	switch k {
	case IntKind:
		n, ok := r.int()
		return int(n), ok
	case FloatKind:
		var f float64
		if r.b[0] == 0xca {
			f = float64(math.Float32frombits(binary.BigEndian.Uint32(r.next(5)[1:])))
		} else {
			f = math.Float64frombits(binary.BigEndian.Uint64(r.next(9)[1:]))
		}
		return f, !r.fail && !math.IsNaN(f) && !math.IsInf(f, 0)
	case StringKind:
		return r.str(), !r.fail
	case BoolKind:
		return r.byte() == 0xc3, true
	}
	return r.time()
}

// time reads msgpack's timestamp extension (type -1) in its three sizes,
// as msgpack's DecodeTime does.
func (r *mpReader) time() (any, bool) {
	var data []byte
	switch r.byte() {
	case 0xd6:
		data = r.next(5)
	case 0xd7:
		data = r.next(9)
	default: // 0xc7: ext 8
		if r.byte() != 12 {
			return nil, false
		}
		data = r.next(13)
	}
	if r.fail || data[0] != 0xff {
		return nil, false
	}
	data = data[1:]
	switch len(data) {
	case 4:
		return time.Unix(int64(binary.BigEndian.Uint32(data)), 0), true
	case 8:
		v := binary.BigEndian.Uint64(data)
		return time.Unix(int64(v&0x3ffffffff), int64(v>>34)), v>>34 < 1e9
	}
	nsec := binary.BigEndian.Uint32(data)
	return time.Unix(int64(binary.BigEndian.Uint64(data[4:])), int64(nsec)), nsec < 1e9
}
