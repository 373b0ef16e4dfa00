package endpoint

import (
	"bufio"
	"encoding/base64"
	"net"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/configurator/catalogue/internal/apperr"
)

// checkUpgrade refuses an upgrade that is not a WebSocket handshake
// (RFC 6455 section 4.2.1), naming what is wrong with it.
func checkUpgrade(r *http.Request) error {
	switch {
	case r.Method != http.MethodGet:
		return apperr.E(apperr.Invalid, "a WebSocket upgrade must be a GET, not %s", clip(r.Method))
	case !httpguts.HeaderValuesContainsToken(r.Header.Values("Connection"), "upgrade"):
		return apperr.E(apperr.Invalid, "a WebSocket upgrade needs the header Connection: Upgrade")
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		return apperr.E(apperr.Invalid, "a WebSocket upgrade needs the header Sec-WebSocket-Version: 13")
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return apperr.E(apperr.Invalid, "a WebSocket upgrade needs one Sec-WebSocket-Key header, got %d", len(keys))
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return apperr.E(apperr.Invalid, "the Sec-WebSocket-Key of a WebSocket upgrade must be 16 bytes in base64")
	}
	return nil
}

// upgradeWriter holds back what the WebSocket library writes when it
// refuses an upgrade, so that the refusal is answered once, in JSON.
type upgradeWriter struct {
	http.ResponseWriter
	status   int
	body     []byte
	hijacked bool
}

// WriteHeader passes the 101 of an accepted upgrade and holds any other
// status back.
func (u *upgradeWriter) WriteHeader(status int) {
	if status == http.StatusSwitchingProtocols {
		u.ResponseWriter.WriteHeader(status)
		return
	}
	if u.status == 0 {
		u.status = status
	}
}

// Write holds back the body of a refusal (its first 512 bytes).
func (u *upgradeWriter) Write(p []byte) (int, error) {
	if u.status == 0 {
		u.status = http.StatusOK
	}
	if len(u.body) < 512 {
		u.body = append(u.body, p...)
	}
	return len(p), nil
}

// Hijack hands the connection over to the WebSocket.
func (u *upgradeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	u.hijacked = true
	return http.NewResponseController(u.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (u *upgradeWriter) Unwrap() http.ResponseWriter { return u.ResponseWriter }
