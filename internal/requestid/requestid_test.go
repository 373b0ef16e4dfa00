package requestid_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/requestid"
)

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   string
		want bool
	}{
		{"uuid", "3f1c2a9e-8b7d-4c1e-9f00-1a2b3c4d5e6f", true},
		{"hex", "0123456789abcdef0123456789abcdef", true},
		{"base64", "q83vEjRWeJA+/w==", true},
		{"proxy style", "host.example/abc-000001", true},
		{"every safe punctuation", "a-b.c_d~e:f@g+h=i/j", true},
		{"one byte", "x", true},
		{"longest", strings.Repeat("a", requestid.MaxLen), true},
		{"empty", "", false},
		{"too long", strings.Repeat("a", requestid.MaxLen+1), false},
		{"space", "abc def", false},
		{"quote", `abc"def`, false},
		{"semicolon", "Root=1-5759;Parent=53995c", false},
		{"comma", "a,b", false},
		{"percent", "a%20b", false},
		{"newline", "a\nb", false},
		{"tab", "a\tb", false},
		{"non-ASCII", "réquest", false},
		{"angle bracket", "<script>", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := requestid.Valid(tc.id); got != tc.want {
				t.Errorf("Valid(%q) = %t; want %t", tc.id, got, tc.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	format := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := requestid.New()
		if !format.MatchString(id) || !requestid.Valid(id) {
			t.Fatalf("New() = %q; want 32 lower-case hex digits, Valid", id)
		}
		if seen[id] {
			t.Fatalf("New() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestMiddleware(t *testing.T) {
	var inside string
	var extra any
	type key struct{}
	also := func(ctx context.Context) context.Context { return context.WithValue(ctx, key{}, "also") }
	h := requestid.Middleware(also)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inside = requestid.FromContext(r.Context())
		extra = r.Context().Value(key{})
		w.WriteHeader(http.StatusTeapot)
	}))
	for _, tc := range []struct {
		name, sent string
		kept       bool
	}{
		{"well-formed id kept", "client-id-42", true},
		{"no id", "", false},
		{"malformed id replaced", "bad id\twith spaces", false},
		{"too long replaced", strings.Repeat("x", 200), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.sent != "" {
				req.Header.Set(requestid.Header, tc.sent)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			echoed := rec.Header().Get(requestid.Header)
			if echoed != inside || !requestid.Valid(echoed) {
				t.Fatalf("echoed %q, handler saw %q; want the same valid id", echoed, inside)
			}
			if extra != "also" {
				t.Errorf("the context decorator's value is %v; want also", extra)
			}
			if kept := echoed == tc.sent; kept != tc.kept {
				t.Errorf("sent %q, got %q: kept = %t; want %t", tc.sent, echoed, kept, tc.kept)
			}
		})
	}
}

func TestInstance(t *testing.T) {
	if got := requestid.Instance(context.Background()); got != "" {
		t.Errorf("Instance without an id = %q; want empty", got)
	}
	ctx := requestid.NewContext(context.Background(), "abc-1")
	if got := requestid.Instance(ctx); got != "urn:request:abc-1" {
		t.Errorf("Instance = %q; want urn:request:abc-1", got)
	}
}
