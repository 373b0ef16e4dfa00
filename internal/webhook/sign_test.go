package webhook_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/configurator/catalogue/internal/webhook"
)

// TestSignReferenceVector: the signature of the Standard Webhooks
// reference vector, which every receiver library verifies.
func TestSignReferenceVector(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	const id, ts, body = "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, `{"test": 2432232314}`
	const want = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	got, err := webhook.Sign(secret, id, ts, []byte(body))
	if err != nil || got != want {
		t.Fatalf("Sign = %q, %v; want %q", got, err, want)
	}
	if !webhook.Verify(secret, id, ts, []byte(body), "v1,bm9wZQ== "+want) {
		t.Error("Verify refused the reference signature among several")
	}
	for name, tc := range map[string]struct {
		id   string
		ts   int64
		body string
	}{
		"another body": {id, ts, `{"test": 2432232315}`},
		"another id":   {"msg_other", ts, body},
		"another time": {id, ts + 1, body},
	} {
		if webhook.Verify(secret, tc.id, tc.ts, []byte(tc.body), want) {
			t.Errorf("Verify accepted the signature for %s", name)
		}
	}
	if _, err := webhook.Sign("whsec_not base64!", id, ts, nil); err == nil {
		t.Error("Sign accepted a secret that is not base64")
	}
}

// TestNewSecret: whsec_ and the base64 of at least 24 random bytes, a new
// one each time.
func TestNewSecret(t *testing.T) {
	a, b := webhook.NewSecret(), webhook.NewSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, webhook.SecretPrefix))
	if !strings.HasPrefix(a, "whsec_") || err != nil || len(key) < 24 {
		t.Errorf("secret %q: key of %d bytes, %v; want whsec_ and base64 of at least 24 bytes", a, len(key), err)
	}
}
