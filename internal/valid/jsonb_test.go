package valid

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL driver, "pgx".
)

// storedCases are JSON texts whose stored form TestStored checks, and
// TestStoredAsPostgreSQL compares with PostgreSQL's jsonb.
var storedCases = []struct{ in, want string }{
	{`{}`, `{}`},
	{` { "b" : 1 , "a" : [ 1 , 2 ] } `, `{"a":[1,2],"b":1}`},
	{`{"email":"ada@example.com","name":"Ada","zz":1,"b":2}`, `{"b":2,"zz":1,"name":"Ada","email":"ada@example.com"}`},
	{`{"a":1,"a":2,"B":3}`, `{"B":3,"a":2}`},
	{`{"x":{"a":1,"a":{"c":1,"b":2}}}`, `{"x":{"a":{"b":2,"c":1}}}`},
	{`[1.50, 1e2, 1E+2, 1.5e1, 1.5e-3, 0.00120, -0, -0.0, -0e5, 0e-3, 123.456e1, 12e-1, -7, 100e-2]`,
		`[1.50,100,100,15,0.0015,0.00120,0,0.0,0,0.000,1234.56,1.2,-7,1.00]`},
	{`{"s":"\u0041\/\u00e9\t\n\r\b\f\u001f\"\\ é ☃ \ud83d\ude00"}`, `{"s":"A/é\t\n\r\b\f\u001f\"\\ é ☃ 😀"}`},
	{`{"\u00e9":1,"é":2,"e":3}`, `{"e":3,"é":2}`},
	{`[true,false,null,"",[],{},[[]]]`, `[true,false,null,"",[],{},[[]]]`},
	{`{"é":1,"ab":2,"b":3}`, `{"b":3,"ab":2,"é":1}`},
	{`{"big":1e300,"small":-2.5e-20}`, `{"big":1` + strings.Repeat("0", 300) + `,"small":-0.000000000000000000025}`},
}

// storedRefusals are JSON texts jsonb cannot hold.
var storedRefusals = []string{`{"a":"\u0000"}`, `{"a":"\ud800"}`, `{"a":"\udc00"}`, `{"a":"\ud800x"}`, `{"a":"\ud800\u0041"}`,
	"{\"a\":\"\xff\"}", `{"a":1e1001}`, `{"a":1e-1001}`}

func TestStored(t *testing.T) {
	for _, tc := range storedCases {
		got, err := Stored([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("Stored(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, in := range storedRefusals {
		if got, err := Stored([]byte(in)); err == nil {
			t.Errorf("Stored(%q) = %s; want an error", in, got)
		}
	}
	for _, in := range []string{``, `{`, `{"a"}`, `{"a":}`, `[1,]`, `01`, `1.`, `1e`, `-`, `{"a":1}x`, `"\x"`, `tru`} {
		if got, err := Stored([]byte(in)); err == nil {
			t.Errorf("Stored(%q) = %s; want an error", in, got)
		}
	}
}

// TestStoredAsPostgreSQL: the stored form of every case, and of random
// documents, is what PostgreSQL's jsonb keeps of the same text, compacted;
// what Stored refuses, jsonb refuses too.
func TestStoredAsPostgreSQL(t *testing.T) {
	url := os.Getenv("TEST_DATABASE_URL")
	if url == "" {
		t.Skip("TEST_DATABASE_URL is not set")
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	jsonb := func(in string) (string, error) {
		var out string
		err := db.QueryRow("SELECT $1::text::jsonb::text", in).Scan(&out)
		return compact(out), err
	}
	ins := []string{}
	for _, tc := range storedCases {
		ins = append(ins, tc.in)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		ins = append(ins, randomJSON(r, 0))
	}
	for _, in := range ins {
		want, err := jsonb(in)
		if err != nil {
			t.Fatalf("PostgreSQL refuses %s: %v", in, err)
		}
		if got, err := Stored([]byte(in)); err != nil || string(got) != want {
			t.Errorf("Stored(%s) = %s, %v; PostgreSQL's jsonb %s", in, got, err, want)
		}
	}
	for _, in := range storedRefusals {
		if maxExp := strings.Contains(in, "e1001") || strings.Contains(in, "e-1001"); maxExp {
			continue // jsonb takes these; Stored bounds the expansion
		}
		if out, err := jsonb(in); err == nil {
			t.Errorf("PostgreSQL takes %q as %s; Stored refuses it", in, out)
		}
	}
}

// randomJSON is a random JSON value with spacing, key orders, duplicate
// keys, escapes and number spellings of every kind.
func randomJSON(r *rand.Rand, depth int) string {
	sp := func() string { return []string{"", " ", "\n\t", ""}[r.IntN(4)] }
	keys := []string{"a", "b", "ab", "ba", "é", "e", "\\u00e9", "A", "key", "Key", "k\\\"", "\\n", "longer key", ""}
	switch k := r.IntN(10); {
	case depth < 3 && k < 2:
		var b strings.Builder
		b.WriteString("{" + sp())
		for i := range r.IntN(5) {
			if i > 0 {
				b.WriteString("," + sp())
			}
			fmt.Fprintf(&b, `"%s"%s:%s%s`, keys[r.IntN(len(keys))], sp(), sp(), randomJSON(r, depth+1))
		}
		return b.String() + sp() + "}"
	case depth < 3 && k < 4:
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, randomJSON(r, depth+1))
		}
		return "[" + sp() + strings.Join(parts, ","+sp()) + sp() + "]"
	case k < 6:
		n := []string{"0", "-0", "7", "-12", "10", "3.0", "0.5", "-0.25", "1.000"}[r.IntN(9)]
		if r.IntN(2) == 0 {
			n += []string{"e", "E"}[r.IntN(2)] + []string{"", "+", "-"}[r.IntN(3)] + fmt.Sprint(r.IntN(25))
		}
		return n
	case k < 8:
		return `"` + []string{"plain", "tab\\there", "\\u0041\\u00e9", "\\/slash", "\\u001f", "☃", "\\ud83d\\ude00", "q\\\"", "\\b\\f", ""}[r.IntN(10)] + `"`
	}
	return []string{"true", "false", "null"}[r.IntN(3)]
}

// compact drops the white space outside strings, as the service does
// when it writes stored JSON out.
func compact(s string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in && c == '\\':
			b.WriteByte(c)
			i++
			c = s[i]
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
