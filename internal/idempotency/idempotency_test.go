package idempotency

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/idempotencykey"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/dbtest"
)

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
		ok   bool
	}{
		{[]string{"8e03978e-40d5-43e8-bc93-6894a57f9324"}, "8e03978e-40d5-43e8-bc93-6894a57f9324", true},
		{[]string{`"quoted key"`}, "quoted key", true},
		{[]string{"  padded "}, "padded", true},
		{[]string{strings.Repeat("k", MaxKeyLen)}, strings.Repeat("k", MaxKeyLen), true},
		{[]string{strings.Repeat("k", MaxKeyLen+1)}, "", false},
		{[]string{""}, "", false},
		{[]string{`""`}, "", false},
		{[]string{"tab\there"}, "", false},
		{[]string{"ünïcode"}, "", false},
		{[]string{"a", "b"}, "", false},
	} {
		got, err := parseKey(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("parseKey(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && (apperr.KindOf(err) != apperr.Invalid || apperr.Errors(err)[0].Field != Header) {
			t.Errorf("parseKey(%q) kind %s, field %q; want %s naming %s", tc.in, apperr.KindOf(err), apperr.Errors(err)[0].Field, apperr.Invalid, Header)
		}
	}
}

func TestFingerprint(t *testing.T) {
	if Fingerprint("ab", "c") == Fingerprint("a", "bc") {
		t.Error("parts are not delimited: (ab, c) and (a, bc) digest alike")
	}
	// Fingerprints are stored beside their keys, so the digest of a request
	// must not change between releases.
	if got, want := Fingerprint("a"), "836501e69990183d068ed21dd9ddc6745d87d9a84db343d9993c562dedc49374"; got != want {
		t.Errorf("Fingerprint(a) = %s; want %s", got, want)
	}
}

// TestMiddleware: the key reaches the request's context, a malformed one
// is refused before the handler, and a replay is marked on the answer.
func TestMiddleware(t *testing.T) {
	var seen string
	h := Middleware(func(w http.ResponseWriter, _ *http.Request, err error) {
		http.Error(w, err.Error(), http.StatusBadRequest)
	}, 0)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = Key(r.Context())
		if r.URL.Query().Get("replay") != "" {
			markReplayed(r.Context())
		}
		w.WriteHeader(http.StatusCreated)
	}))
	for _, tc := range []struct {
		header, query string
		status        int
		key, replayed string
	}{
		{"", "", 201, "", ""},
		{"k1", "", 201, "k1", ""},
		{"k2", "replay=1", 201, "k2", "true"},
		{strings.Repeat("x", 300), "", 400, "", ""},
	} {
		seen = ""
		req := httptest.NewRequest(http.MethodPost, "/orders?"+tc.query, nil)
		if tc.header != "" {
			req.Header.Set(Header, tc.header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status || seen != tc.key || rec.Header().Get(ReplayedHeader) != tc.replayed {
			t.Errorf("%q: %d key %q replayed %q; want %d %q %q", tc.header, rec.Code, seen, rec.Header().Get(ReplayedHeader), tc.status, tc.key, tc.replayed)
		}
	}
}

// TestRecordAndReplay: a recorded key replays its order for the same
// request and owner, refuses another request, is independent for another
// owner, is forgotten once expired, and loses a race to an earlier record.
func TestRecordAndReplay(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		ctx := context.Background()
		sys := dbtest.Sys
		a, b := dbtest.NewTenant(t, c, "A"), dbtest.NewTenant(t, c, "B")
		if id, err := Replay(ctx, c, a.ID, "k", "fp1"); id != 0 || err != nil {
			t.Fatalf("Replay of a new key = %d, %v; want 0, nil", id, err)
		}
		if err := Record(ctx, c, a.ID, "k", "fp1", 41); err != nil {
			t.Fatal(err)
		}
		if id, err := Replay(ctx, c, a.ID, "k", "fp1"); id != 41 || err != nil {
			t.Errorf("Replay of the same request = %d, %v; want 41, nil", id, err)
		}
		if _, err := Replay(ctx, c, a.ID, "k", "fp2"); apperr.KindOf(err) != apperr.KeyReused {
			t.Errorf("Replay of another request = %v; want %s", err, apperr.KeyReused)
		}
		if id, err := Replay(ctx, c, b.ID, "k", "fp2"); id != 0 || err != nil {
			t.Errorf("another owner's equal key = %d, %v; want 0, nil", id, err)
		}
		if err := Record(ctx, c, a.ID, "k", "fp1", 42); !errors.Is(err, ErrRace) {
			t.Errorf("a second Record of the key = %v; want ErrRace", err)
		}
		if err := Record(ctx, c, b.ID, "old", "fp", 1); err != nil {
			t.Fatal(err)
		}
		// A day later the key is forgotten: the same key runs anew.
		later := time.Now().Add(TTL + time.Minute)
		now = func() time.Time { return later }
		t.Cleanup(func() { now = time.Now })
		if id, err := Replay(ctx, c, a.ID, "k", "fp2"); id != 0 || err != nil {
			t.Errorf("Replay of an expired key = %d, %v; want 0, nil", id, err)
		}
		if err := Record(ctx, c, a.ID, "k", "fp2", 43); err != nil {
			t.Errorf("Record after expiry: %v", err)
		}
		// Expire drops B's key, recorded a day before; A's new one stays.
		if n, err := Expire(ctx, c, later, 1000); n != 1 || err != nil {
			t.Errorf("Expire = %d, %v; want 1 expired key", n, err)
		}
		if n := c.IdempotencyKey.Query().CountX(sys); n != 1 {
			t.Errorf("%d keys after the sweep; want 1", n)
		}
	})
}

// TestRecordTTL: a key lives for the TTL the middleware of its request
// was given (IDEMPOTENCY_TTL), and for TTL outside a request or with none.
func TestRecordTTL(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		a := dbtest.NewTenant(t, c, "A")
		for i, tc := range []struct {
			ttl, want time.Duration
			request   bool
		}{
			{time.Minute, time.Minute, true},
			{0, TTL, true},
			{0, TTL, false},
		} {
			ctx := context.Background()
			if tc.request {
				Middleware(nil, tc.ttl)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
					ctx = r.Context()
				})).ServeHTTP(httptest.NewRecorder(), func() *http.Request {
					req := httptest.NewRequest(http.MethodPost, "/orders", nil)
					req.Header.Set(Header, "k")
					return req
				}())
			}
			key := fmt.Sprintf("k%d", i)
			if err := Record(ctx, c, a.ID, key, "fp", i+1); err != nil {
				t.Fatal(err)
			}
			rec := c.IdempotencyKey.Query().Where(idempotencykey.Key(key)).OnlyX(dbtest.Sys)
			if got := rec.ExpiresAt.Sub(rec.CreatedAt); got != tc.want {
				t.Errorf("%+v: the key lives %v; want %v", tc, got, tc.want)
			}
		}
	})
}
