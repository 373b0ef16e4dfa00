package scalar

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"entgo.io/contrib/entgql"

	"github.com/configurator/catalogue/internal/apperr"
)

// allocs returns the bytes one call of f allocates: the fewest over n
// calls, which are f's own whatever other goroutines allocated meanwhile.
func allocs(n int, f func()) uint64 {
	least := ^uint64(0)
	var before, after runtime.MemStats
	for range n {
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// wantClientError fails unless err is nil or an Invalid *apperr.Error.
func wantClientError(t *testing.T, what string, err error) {
	t.Helper()
	var ae *apperr.Error
	if err != nil && (!errors.As(err, &ae) || ae.Kind != apperr.Invalid) {
		t.Fatalf("%s: %v (%T); want BAD_REQUEST or success", what, err, err)
	}
}

// written is a cursor as a connection writes it (entgql's MarshalGQL).
func written(id int, v any) string {
	var b bytes.Buffer
	entgql.Cursor[int]{ID: id, Value: v}.MarshalGQL(&b)
	return strings.Trim(b.String(), `"`)
}

// TestCursorRoundTrip: every cursor a connection writes reads back, for
// its own sort kind and for AnyKind, and no other kind.
func TestCursorRoundTrip(t *testing.T) {
	for _, v := range []any{1, 1 << 40, 12.5, 0.0, math.MaxFloat64, "", "Oak \u00e9 \U0001F600", strings.Repeat("\u00e9", 255),
		true, false, time.Unix(1_700_000_000, 0), time.Unix(1_700_000_000, 123_456_789), time.Unix(1<<35, 1), time.Unix(0, 0)} {
		s := written(7, v)
		k := KindOf(v)
		if reflect.ValueOf(v).IsZero() && k != TimeKind {
			v, k = nil, AnyKind // entgql leaves a zero sort key out: any kind reads it
		}
		for _, want := range []SortKind{k, AnyKind} {
			c, err := ReadCursor("after", s, want)
			if err != nil || c.ID != 7 || !same(c.Value, v) {
				t.Errorf("ReadCursor(%q, %d) = %v, %v; want {7 %v}", s, want, c, err, v)
			}
		}
		for other := IntKind; other < NoKind; other++ {
			if other != k && k != AnyKind {
				if _, err := ReadCursor("after", s, other); err == nil {
					t.Errorf("ReadCursor(cursor of %T, kind %d) accepted", v, other)
				}
			}
		}
	}
}

func same(got, want any) bool {
	if t, ok := want.(time.Time); ok {
		g, ok := got.(time.Time)
		return ok && g.Equal(t)
	}
	return got == want
}

// FuzzCursor: whatever a client sends as a cursor is read or refused as
// BAD_REQUEST, allocating no more than the cursor's own size (a few
// copies of it) and never more than a cursor of MaxCursorBytes would.
func FuzzCursor(f *testing.F) {
	for _, seed := range []string{
		written(1, 1), written(5, 10.5), written(9, "pending"), written(3, time.Unix(1_700_000_000, 5)), written(2, true),
		"", "!!!", "gqFpAaF2", written(1, []any{1}), written(1, map[string]any{"a": 1}),
		base64.RawStdEncoding.EncodeToString(append([]byte("\x82\xa1i\x01\xa1v"), bytes.Repeat([]byte{0x91}, 1500)...)),
		base64.RawStdEncoding.EncodeToString([]byte("\x82\xa1i\x01\xa1v\xdb\xff\xff\xff\xff")),
		strings.Repeat("kZGR", 300_000),
	} {
		f.Add(seed, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, kind uint8) {
		want := SortKind(kind % uint8(NoKind+1))
		var err error
		n := allocs(3, func() { _, err = ReadCursor("after", s, want) })
		wantClientError(t, "ReadCursor", err)
		if limit := uint64(4*min(len(s), MaxCursorBytes) + 8192); n > limit {
			t.Errorf("ReadCursor of %d bytes allocated %d; want at most %d", len(s), n, limit)
		}
		if _, err := UnmarshalCursor(s); err != nil {
			wantClientError(t, "UnmarshalCursor", err)
		}
	})
}

// FuzzScalars: the JSON values a client sends to the ID, Int, Float,
// String, Map and Date scalars are read or refused as BAD_REQUEST, within
// an allocation bound by their size.
func FuzzScalars(f *testing.F) {
	for _, seed := range []string{`"12"`, `12`, `-1`, `1e309`, `"1e3"`, `"a\u0000b"`, `{"a":[1,{"b":null}]}`, `"2026-03-01"`,
		`"2026-03-01T10:00:00+02:00"`, `[1,2]`, `null`, `true`, `9223372036854775808`, `"` + strings.Repeat("9", 5000) + `"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return // the transport refuses a body that is not JSON
		}
		var d Date
		for name, read := range map[string]func() error{
			"ID":     func() error { _, err := UnmarshalID(v); return err },
			"Int":    func() error { _, err := UnmarshalInt(v); return err },
			"Float":  func() error { _, err := UnmarshalFloatContext(nil, v); return err },
			"String": func() error { _, err := UnmarshalString(v); return err },
			"Map":    func() error { _, err := UnmarshalObject(v); return err },
			"Date":   func() error { return d.UnmarshalGQL(v) },
		} {
			var err error
			n := allocs(3, func() { err = read() })
			wantClientError(t, name, err)
			if limit := uint64(8*len(raw) + 8192); n > limit {
				t.Errorf("%s of %d bytes allocated %d; want at most %d", name, len(raw), n, limit)
			}
		}
	})
}
