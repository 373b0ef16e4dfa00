package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/configurator/catalogue/internal/auth"
)

// TestProviderAnswersBounded: the provider's discovery document and key
// set are read up to auth.ProviderAnswerLimit; a provider (or whatever
// answers at its address) that sends more makes NewProvider fail naming
// the limit after reading little more than it, not after reading and
// decoding all of it.
func TestProviderAnswersBounded(t *testing.T) {
	for _, tc := range []struct{ name, big string }{
		{"discovery", "/.well-known/openid-configuration"},
		{"keys", "/jwks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int64
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == tc.big {
					// 64 MiB of a JSON string that never ends, in 64 KiB writes.
					chunk := []byte(`{"keys":"` + strings.Repeat("a", 64<<10))
					for i := 0; i < 1024; i++ {
						n, err := w.Write(chunk)
						sent.Add(int64(n))
						if err != nil {
							return
						}
						chunk = chunk[:0]
						chunk = append(chunk, strings.Repeat("a", 64<<10)...)
					}
					return
				}
				switch r.URL.Path {
				case "/.well-known/openid-configuration":
					fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q}`, srv.URL, srv.URL+"/jwks")
				case "/jwks":
					fmt.Fprint(w, `{"keys":[]}`)
				}
			}))
			defer srv.Close()
			_, err := auth.NewProvider(context.Background(), auth.ProviderConfig{Issuer: srv.URL, Audience: "x"}, nil)
			if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
				t.Fatalf("NewProvider = %v; want an error naming the 1 MiB limit", err)
			}
			srv.CloseClientConnections()
			if got := sent.Load(); got > 8<<20 {
				t.Errorf("the provider got %d bytes out before the refusal; want little more than 1 MiB", got)
			}
		})
	}
}
