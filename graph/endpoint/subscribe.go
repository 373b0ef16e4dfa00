package endpoint

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/viewer"
)

// websocket is the WebSocket transport (graphql-transport-ws, and
// graphql-ws for older clients); Server-Sent Events are gqlgen's SSE
// transport (POST with Accept: text/event-stream). Pings pings every 15 s keep proxies
// from closing an idle subscription, and a client has 10 s to send
// connection_init.
func websocket(tokens *auth.Tokens) websocketTransport {
	limit := int64(MaxDocumentBytes * 2)
	return websocketTransport{transport.Websocket{
		KeepAlivePingInterval: 15 * time.Second,
		InitTimeout:           10 * time.Second,
		InitFunc:              initFunc(tokens),
		PayloadReadLimit:      &limit,
	}}
}

// initFunc authenticates a WebSocket connection by the Authorization of
// its connection_init payload, as browsers cannot set headers on an
// upgrade. Without one, the upgrade's own header (auth.Middleware) counts.
func initFunc(tokens *auth.Tokens) transport.WebsocketInitFunc {
	return func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		h := strings.TrimSpace(p.Authorization())
		if h == "" {
			return ctx, nil, nil
		}
		if tokens == nil {
			return ctx, nil, apperr.E(apperr.Unauthenticated, "tokens are not accepted by this server")
		}
		token := h
		if scheme, rest, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			token = strings.TrimSpace(rest)
		}
		v, err := tokens.Resolve(ctx, token)
		if err != nil {
			return ctx, nil, err
		}
		return viewer.NewContext(ctx, v), nil, nil
	}
}

// operationMeter is the meter an operation is charged to: the request's
// when it has not been charged yet (one operation per HTTP request), and
// a fresh one for each further operation of a WebSocket connection, so
// that every subscription and every operation sent over a socket costs
// what it would cost over HTTP.
func (l *limits) operationMeter(ctx context.Context) *ratelimit.Meter {
	m := ratelimit.FromContext(ctx)
	if m != nil && !m.Charged() {
		return m
	}
	v := viewer.FromContext(ctx)
	if l.lim == nil || v == nil {
		return m
	}
	return ratelimit.NewMeter(l.lim, ratelimit.Key(v.TokenID), http.Header{})
}
