// Package webhook sends the events of internal/events to the endpoints
// owners register, as Standard Webhooks (https://www.standardwebhooks.com):
// the secret and its signature, the guard that keeps deliveries off
// private networks, and the job queue (River) that delivers, retries and
// shares the work among replicas. It knows nothing of GraphQL or HTTP
// handlers; internal/app records deliveries, cmd/server runs the queue.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix starts every endpoint secret, as Standard Webhooks names
// them, so that a secret pasted in the wrong place is recognisable.
const SecretPrefix = "whsec_"

// secretBytes is the length of a secret's key: 32 random bytes, above the
// 24 the specification asks for.
const secretBytes = 32

// NewSecret returns a fresh endpoint secret: whsec_ and the base64 of
// 32 random bytes.
func NewSecret() string {
	b := make([]byte, secretBytes)
	rand.Read(b)
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Sign returns the webhook-signature header of a message: "v1," and the
// base64 HMAC-SHA256 of "id.timestamp.body" keyed by the secret's key,
// the base64-decoded part after whsec_.
func Sign(secret, id string, timestamp int64, body []byte) (string, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil {
		return "", errors.New("webhook secret: not base64 after " + SecretPrefix)
	}
	mac := hmac.New(sha256.New, k)
	fmt.Fprintf(mac, "%s.%d.", id, timestamp)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// Verify reports whether header (one or more space-separated signatures,
// as a receiver gets them during a secret rotation) holds a valid v1
// signature of the message. Receivers in Go can use it as they are; the
// docs/events.md shows the same in a few lines for other languages.
func Verify(secret, id string, timestamp int64, body []byte, header string) bool {
	want, err := Sign(secret, id, timestamp, body)
	if err != nil {
		return false
	}
	for _, sig := range strings.Fields(header) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}
