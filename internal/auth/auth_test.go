package auth_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/viewer"
)

// TestSigningKey: without JWT_SECRET one key is generated and kept, so the
// CLI and the server (and every replica) agree; a short secret is refused.
func TestSigningKey(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		ctx := context.Background()
		k1, err := auth.SigningKey(ctx, c)
		if err != nil || len(k1) != 32 {
			t.Fatalf("first key: %v (%d bytes)", err, len(k1))
		}
		k2, err := auth.SigningKey(ctx, c)
		if err != nil || !bytes.Equal(k1, k2) {
			t.Fatalf("second call made another key: %v", err)
		}
		secret := strings.Repeat("s", auth.MinSecretLen)
		if s, err := auth.OpenSigner(ctx, c, secret); err != nil || len(s.Keys()) != 1 || string(s.Keys()[0].Secret) != secret {
			t.Errorf("JWT_SECRET not used: %v", err)
		}
		if _, err := auth.OpenSigner(ctx, c, "short"); err == nil {
			t.Error("a 5-byte JWT_SECRET was accepted")
		}
	})
}

func TestSignerRoundTrip(t *testing.T) {
	s := auth.NewSigner([]byte(strings.Repeat("k", 32)))
	tok, err := s.Mint(42, viewer.KindDashboard, time.Now(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	id, kind, err := s.Verify(tok)
	if err != nil || id != 42 || kind != viewer.KindDashboard {
		t.Errorf("Verify(Mint(42, dashboard)) = %d, %q, %v", id, kind, err)
	}
	other := auth.NewSigner([]byte(strings.Repeat("x", 32)))
	if _, _, err := other.Verify(tok); err == nil {
		t.Error("a token verified with another key")
	}
	if _, _, err := s.Verify(tok[:len(tok)-2]); err == nil {
		t.Error("a truncated token verified")
	}
}
