package fast

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/configurator/catalogue/graph/scalar"
)

// The appending twins must write what gqlgen's marshalers write, on every
// value: each case runs both and compares bytes, and that both refuse the
// same values (null in a non-null position, numbers JSON cannot hold).

func marshaled(m graphql.Marshaler) []byte {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	return b.Bytes()
}

func twin(f func(w *writer) bool) ([]byte, bool) {
	w := &writer{}
	ok := f(w)
	return w.buf, ok
}

var texts = []string{
	"", "plain", `"quoted"`, `back\slash`, "tab\there", "nl\n", "cr\r", "\x00\x01\x1f\x7f", "\b\f", "é日本😀",
	"\u2028\u2029", "\xff\xfe invalid", "\xe2\x80", "<html>&amp;</html>", "/path/to?x=1&y=2",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString(texts[r.IntN(len(texts))])
	}
	if r.IntN(4) == 0 {
		b.WriteByte(byte(r.IntN(256)))
	}
	return b.String()
}

func TestStringTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for i := range 5000 {
		s := randomText(r)
		if i < len(texts) {
			s = texts[i]
		}
		got, _ := twin(func(w *writer) bool { return w.string(s, true) })
		if want := marshaled(graphql.MarshalString(s)); !bytes.Equal(got, want) {
			t.Fatalf("string(%q) = %s; want %s", s, got, want)
		}
		if want := marshaled(scalar.MarshalString(s)); !bytes.Equal(got, want) {
			t.Fatalf("string(%q) = %s; scalar.MarshalString writes %s", s, got, want)
		}
	}
}

func TestNumberTwins(t *testing.T) {
	ints := []int{0, 1, -1, 42, math.MaxInt64, math.MinInt64, 1 << 53}
	for _, n := range ints {
		if got, _ := twin(func(w *writer) bool { return w.int(n, true) }); !bytes.Equal(got, marshaled(graphql.MarshalInt(n))) || !bytes.Equal(got, marshaled(scalar.MarshalInt(n))) {
			t.Errorf("int(%d) = %s", n, got)
		}
		if got, _ := twin(func(w *writer) bool { return w.id(n, true) }); !bytes.Equal(got, marshaled(scalar.MarshalID(n))) {
			t.Errorf("id(%d) = %s", n, got)
		}
	}
	for _, b := range []bool{true, false} {
		if got, _ := twin(func(w *writer) bool { return w.bool(b, true) }); !bytes.Equal(got, marshaled(graphql.MarshalBoolean(b))) {
			t.Errorf("bool(%v) = %s", b, got)
		}
	}
	r := rand.New(rand.NewPCG(2, 2))
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-5, 1e-4, 123456, 1e20, 1e21, 1e22, 1e100, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.962, 1942.28}
	for range 20000 {
		floats = append(floats, (r.Float64()-0.5)*math.Pow(10, float64(r.IntN(80)-40)))
	}
	for _, f := range floats {
		got, ok := twin(func(w *writer) bool { return w.float(f, true) })
		for _, m := range []graphql.ContextMarshaler{graphql.MarshalFloatContext(f), scalar.MarshalFloatContext(f)} {
			var want bytes.Buffer
			if err := m.MarshalGQLContext(context.Background(), &want); err != nil || !ok {
				t.Fatalf("float(%v) refused: %v, %v", f, err, ok)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("float(%v) = %s; want %s", f, got, want.Bytes())
			}
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if err := graphql.MarshalFloatContext(f).MarshalGQLContext(context.Background(), &bytes.Buffer{}); err == nil {
			t.Fatalf("gqlgen wrote %v", f)
		}
		if _, ok := twin(func(w *writer) bool { return w.float(f, true) }); ok {
			t.Errorf("float(%v) was written", f)
		}
	}
}

func TestTimeTwin(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	times := []time.Time{
		time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), time.Date(2024, 11, 30, 19, 15, 58, 704382000, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 1, berlin), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Unix(0, 0).UTC(),
		time.Date(9999, 1, 1, 0, 0, 0, 999999999, time.Local),
	}
	for _, tm := range times {
		got, ok := twin(func(w *writer) bool { return w.time(tm, true) })
		if want := marshaled(graphql.MarshalTime(tm)); !ok || !bytes.Equal(got, want) {
			t.Errorf("time(%v) = %s; want %s", tm, got, want)
		}
	}
	if graphql.MarshalTime(time.Time{}) != graphql.Null {
		t.Fatal("gqlgen writes the zero time")
	}
	if _, ok := twin(func(w *writer) bool { return w.time(time.Time{}, true) }); ok {
		t.Error("the zero time was written in a non-null position")
	}
	if got, ok := twin(func(w *writer) bool { return w.time(time.Time{}, false) }); !ok || string(got) != "null" {
		t.Errorf("the zero time in a nullable position = %s, %v", got, ok)
	}
}

func TestObjectTwin(t *testing.T) {
	for _, raw := range []string{"", `{}`, `{"a": [1, 2, {"b" : "c d\" e"}]}`, "{\n\t\"x\":\"\\\\\"\r\n}", `{"k":"\u2028"}`} {
		got, _ := twin(func(w *writer) bool { return w.object(json.RawMessage(raw), true) })
		if want := marshaled(scalar.MarshalObject(json.RawMessage(raw))); !bytes.Equal(got, want) {
			t.Errorf("object(%q) = %s; want %s", raw, got, want)
		}
		if raw == "" {
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(raw)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, compact.Bytes()) {
			t.Errorf("object(%q) = %s; json.Compact writes %s", raw, got, compact.Bytes())
		}
	}
}
