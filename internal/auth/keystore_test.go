package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"

	"github.com/MicahParks/jwkset"
)

// TestKeyStoreCountsRemovals: a fetch of the provider's keys counts as a
// removal when a key it held is gone, or its kid names another key now;
// a fetch that only adds keys, or brings the same ones, does not.
func TestKeyStoreCountsRemovals(t *testing.T) {
	jwk := func(kid string) jwkset.JWK {
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		k, err := jwkset.NewJWKFromKey(&priv.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: kid, ALG: jwkset.AlgES256}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a, b, otherA := jwk("a"), jwk("b"), jwk("a")
	s := &keyStore{MemoryJWKSet: jwkset.NewMemoryStorage()}
	for i, step := range []struct {
		keys []jwkset.JWK
		want uint64
	}{
		{[]jwkset.JWK{a}, 0},
		{[]jwkset.JWK{a}, 0},
		{[]jwkset.JWK{b, a}, 0},
		{[]jwkset.JWK{b}, 1},
		{[]jwkset.JWK{b, a}, 1},
		{[]jwkset.JWK{b, otherA}, 2},
		{nil, 3},
	} {
		if err := s.KeyReplaceAll(context.Background(), step.keys); err != nil {
			t.Fatal(err)
		}
		if got := s.removals.Load(); got != step.want {
			t.Errorf("step %d: %d removals; want %d", i, got, step.want)
		}
	}
}
