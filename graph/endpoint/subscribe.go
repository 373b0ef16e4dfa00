package endpoint

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"golang.org/x/net/http/httpguts"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/auth"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/edge"
	"github.com/configurator/catalogue/internal/problem"
	"github.com/configurator/catalogue/internal/ratelimit"
	"github.com/configurator/catalogue/internal/rule"
	"github.com/configurator/catalogue/internal/viewer"
)

// Subscriptions are served over WebSocket, speaking graphql-transport-ws
// (the protocol of the graphql-ws library, which Apollo Client, urql and
// GraphiQL use), and over Server-Sent Events (gqlgen's SSE transport:
// POST with Accept: text/event-stream). Every stream follows its token
// (auth.Tokens.Watch): it ends within a few seconds of the token's
// revocation or at its expiry, a WebSocket with close code 4403, an SSE
// stream with a last event carrying an UNAUTHENTICATED error. The streams
// are capped (StreamLimits).

// StreamLimits caps the open streams, so that one token cannot make a
// server hold an unbounded number of subscribers. A refusal is a
// SUBSCRIPTION_LIMIT error naming the cap.
type StreamLimits struct {
	// PerConnection is the number of operations (subscriptions, and
	// queries while they run) one WebSocket may have open at once
	// (SUBSCRIPTIONS_PER_CONNECTION); 0 is config.DefaultSubscriptionsPerConnection.
	PerConnection int
	// PerCaller is the number of streams (WebSocket subscriptions and
	// SSE requests) one caller (token) may have open on this server at
	// once (STREAMS_PER_TOKEN); 0 is config.DefaultStreamsPerToken.
	PerCaller int
}

// The timing of a graphql-transport-ws connection.
const (
	// wsInitTimeout is how long a client has to send connection_init.
	wsInitTimeout = 10 * time.Second
	// wsPingEvery is how often the server pings, so that proxies do not
	// close an idle subscription; graphql-ws clients answer pong.
	wsPingEvery = 15 * time.Second
	// wsWriteTimeout bounds one write to a client; a client that does
	// not read for this long is disconnected.
	wsWriteTimeout = 10 * time.Second
)

// graphqlTransportWS is the WebSocket subprotocol served.
const graphqlTransportWS = "graphql-transport-ws"

// The close codes of graphql-transport-ws (and RFC 6455's).
const (
	closeNormal            = 1000
	closeGoingAway         = 1001
	closeInternal          = 1011
	closeTryAgainLater     = 1013
	closeBadRequest        = 4400
	closeUnauthorized      = 4401
	closeForbidden         = 4403
	closeSubprotocol       = 4406
	closeInitTimeout       = 4408
	closeSubscriberExists  = 4409
	closeTooManyInitialise = 4429
)

// streams serves the subscriptions of one handler: the WebSocket
// transport, and the extension that watches and caps SSE streams.
type streams struct {
	tokens        *auth.Tokens
	perConnection int
	perCaller     int

	mu   sync.Mutex
	open map[string]int // open streams by caller (callerKey)
}

func newStreams(tokens *auth.Tokens, l StreamLimits) *streams {
	return &streams{
		tokens:        tokens,
		perConnection: cmp.Or(l.PerConnection, config.DefaultSubscriptionsPerConnection),
		perCaller:     cmp.Or(l.PerCaller, config.DefaultStreamsPerToken),
		open:          map[string]int{},
	}
}

// callerKey is the identity the per-caller cap counts by: the token
// record, or, for a caller v (the viewer of ctx) without one, the owner
// it is confined to (rule.Owner), its kind and home configurator, so
// that every caller is capped.
func callerKey(ctx context.Context, v *viewer.Viewer) string {
	if v.TokenID != 0 {
		return fmt.Sprintf("token:%d", v.TokenID)
	}
	owner, _, _ := rule.Owner(ctx)
	return fmt.Sprintf("%s:%d:%d", v.Kind, owner, v.ConfiguratorID)
}

// acquire takes one of the stream slots of ctx's caller, or refuses when
// it has perCaller open; release gives it back (once). Anonymous callers
// hold no slot: nothing they may subscribe to streams.
func (s *streams) acquire(ctx context.Context) (release func(), err error) {
	v := viewer.FromContext(ctx)
	if v == nil {
		return func() {}, nil
	}
	key := callerKey(ctx, v)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[key] >= s.perCaller {
		return nil, apperr.E(apperr.SubscriptionLimit, "this token has %d streams open on this server, the limit (STREAMS_PER_TOKEN); end one first", s.perCaller)
	}
	s.open[key]++
	return sync.OnceFunc(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.open[key]--; s.open[key] <= 0 {
			delete(s.open, key)
		}
	}), nil
}

// watch returns ctx made to end with v's token (auth.Tokens.Watch).
func (s *streams) watch(ctx context.Context, v *viewer.Viewer) (context.Context, context.CancelFunc) {
	if s.tokens == nil {
		return ctx, func() {}
	}
	return s.tokens.Watch(ctx, v)
}

// check reports whether the token of a stream's ctx (made by watch) would
// still be accepted over HTTP, ending the stream when not
// (auth.Tokens.Check); called before each event is sent.
func (s *streams) check(ctx context.Context) error {
	if s.tokens == nil {
		return nil
	}
	return s.tokens.Check(ctx)
}

// endedBy is the error a stream whose watched context wctx ended tells
// its client: its token's end, or the cause (the database could not be
// asked).
func endedBy(wctx context.Context) error {
	return cmp.Or(auth.Ended(wctx), context.Cause(wctx))
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = (*streams)(nil)

func (*streams) ExtensionName() string                   { return "Streams" }
func (*streams) Validate(graphql.ExecutableSchema) error { return nil }

// socketKey marks the context of an operation of a WebSocket connection,
// which watches and caps its streams itself.
type socketKey struct{}

// InterceptOperation watches and caps a subscription over HTTP (SSE):
// it takes a slot of the caller's cap for as long as the request lasts,
// ends the stream when its token is revoked or expires, and then sends
// one last response, the UNAUTHENTICATED error that says why.
func (s *streams) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Subscription || ctx.Value(socketKey{}) != nil {
		return next(ctx)
	}
	v := viewer.FromContext(ctx)
	release, err := s.acquire(ctx)
	if err != nil {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{presentError(ctx, err)}})
	}
	wctx, _ := s.watch(ctx, v)
	context.AfterFunc(wctx, release)
	if wctx.Err() != nil && ctx.Err() == nil {
		// Refused by the check after the registration (Watch).
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{presentError(ctx, endedBy(wctx))}})
	}
	h := next(wctx)
	ended := false
	return func(ctx context.Context) *graphql.Response {
		if ended {
			return nil
		}
		resp := h(ctx)
		if resp != nil && s.check(wctx) == nil {
			return resp
		}
		ended = true
		if err := auth.Ended(wctx); err != nil || resp != nil {
			return &graphql.Response{Errors: gqlerror.List{presentError(ctx, endedBy(wctx))}}
		}
		return nil
	}
}

// websocketTransport serves WebSocket upgrades with graphql-transport-ws.
type websocketTransport struct {
	s *streams
}

// Supports takes a request to upgrade to WebSocket; another upgrade
// (h2c, ...) falls through to the exchange, which refuses it.
func (websocketTransport) Supports(r *http.Request) bool {
	return httpguts.HeaderValuesContainsToken(r.Header.Values("Upgrade"), "websocket")
}

// Do upgrades the request and serves the connection until it ends. A
// malformed upgrade is refused like every other error of the endpoint, in
// JSON with extensions.code and requestId (the WebSocket library would
// answer it in text/plain); a client that does not offer
// graphql-transport-ws is closed with 4406, as the protocol's reference
// server does.
func (t websocketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if err := checkUpgrade(r); err != nil {
		writeErrors(w, r, err)
		return
	}
	uw := &upgradeWriter{ResponseWriter: w}
	conn, err := websocket.Accept(uw, r, &websocket.AcceptOptions{Subprotocols: []string{graphqlTransportWS}})
	if err != nil {
		if !uw.hijacked && uw.status != 0 {
			// Refused by the library for a reason checkUpgrade does not
			// know (an Origin it does not trust): its reason, clipped.
			kind := apperr.Invalid
			if uw.status == http.StatusForbidden {
				kind = apperr.Forbidden
			}
			reason, _, _ := strings.Cut(string(uw.body), "\n")
			writeErrors(w, r, apperr.E(kind, "the WebSocket upgrade is refused: %s", clip(reason)))
		}
		return
	}
	if conn.Subprotocol() != graphqlTransportWS {
		conn.Close(closeSubprotocol, "Subprotocol not acceptable: use graphql-transport-ws")
		return
	}
	conn.SetReadLimit(int64(MaxDocumentBytes * 2))
	c := &wsConn{
		s:       t.s,
		conn:    conn,
		exec:    exec,
		headers: r.Header,
		// Upgraded at the GraphQL path, the connection lives as long as
		// its client, beyond the request deadline and out of the queue.
		ctx:       context.WithValue(edge.Lift(r.Context()), socketKey{}, true),
		ops:       map[string]*wsOp{},
		stopWatch: func() {},
	}
	defer func() { c.stopWatch() }()
	c.serve()
}

// wsMessage is a message of graphql-transport-ws.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// wsConn is one graphql-transport-ws connection.
type wsConn struct {
	s       *streams
	conn    *websocket.Conn
	exec    graphql.GraphExecutor
	headers http.Header
	// ctx is the connection's: the upgrade request's until
	// connection_init is acknowledged, then with the viewer and watched
	// (auth.Tokens.Watch). Only serve's goroutine changes it, before any
	// operation starts.
	ctx       context.Context
	stopWatch context.CancelFunc
	initSeen  bool
	acked     bool

	mu     sync.Mutex
	ops    map[string]*wsOp
	closed bool
}

// wsOp is an operation in flight.
type wsOp struct {
	cancel context.CancelFunc
}

// serve runs the connection: it reads messages, pings, enforces the
// init timeout, and closes with 4403 when the token's watch ends.
func (c *wsConn) serve() {
	msgs := make(chan []byte)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		defer close(msgs)
		for {
			typ, b, err := c.conn.Read(context.Background())
			if err != nil {
				return
			}
			if typ != websocket.MessageText {
				b = nil
			}
			select {
			case msgs <- b:
			case <-quit:
				return
			}
		}
	}()
	// Unreferenced timers are collected (Go 1.23), stopped or not.
	initTimeout := time.After(wsInitTimeout)
	ping := time.Tick(wsPingEvery)
	for {
		select {
		case b, ok := <-msgs:
			if !ok {
				c.close(closeNormal, "")
				return
			}
			if !c.handle(b) {
				return
			}
		case <-initTimeout:
			if !c.acked {
				c.close(closeInitTimeout, "Connection initialisation timeout")
				return
			}
		case <-ping:
			if c.acked {
				c.write(wsMessage{Type: "ping"})
			}
		case <-c.ctx.Done():
			if err := auth.Ended(c.ctx); err != nil {
				c.close(closeForbidden, clipReason("Forbidden: "+err.Error()))
			} else if cause := context.Cause(c.ctx); !errors.Is(cause, context.Canceled) && problem.Classify(cause).Kind == apperr.Unavailable {
				c.close(closeTryAgainLater, "the database is unavailable; try again later")
			} else {
				c.close(closeGoingAway, "the server is going away")
			}
			return
		}
	}
}

// handle acts on one message; false when it closed the connection.
func (c *wsConn) handle(b []byte) bool {
	var m wsMessage
	if b == nil {
		return c.invalid("binary messages are not part of graphql-transport-ws")
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return c.invalid("not a JSON object with a string type")
	}
	switch m.Type {
	case "connection_init":
		if c.initSeen {
			c.close(closeTooManyInitialise, "Too many initialisation requests")
			return false
		}
		c.initSeen = true
		var payload map[string]any
		if len(m.Payload) > 0 && json.Unmarshal(m.Payload, &payload) != nil {
			return c.invalid("the payload of connection_init must be an object")
		}
		return c.init(payload)
	case "ping":
		pong := wsMessage{Type: "pong"}
		if len(m.Payload) > 0 && m.Payload[0] == '{' {
			pong.Payload = m.Payload
		}
		c.write(pong)
	case "pong":
	case "subscribe":
		if !c.acked {
			c.close(closeUnauthorized, "Unauthorized")
			return false
		}
		if m.ID == "" {
			return c.invalid("subscribe needs an id")
		}
		params := &graphql.RawParams{}
		if len(m.Payload) == 0 || m.Payload[0] != '{' || decodeJSON(bytes.NewReader(m.Payload), params) != nil ||
			params.Query == "" && params.Extensions["persistedQuery"] == nil {
			return c.invalid("the payload of subscribe must be an object with a query")
		}
		return c.subscribe(m.ID, params)
	case "complete":
		c.mu.Lock()
		op := c.ops[m.ID]
		delete(c.ops, m.ID)
		c.mu.Unlock()
		if op != nil {
			op.cancel()
		}
	default:
		return c.invalid(fmt.Sprintf("unexpected message type %.40q", m.Type))
	}
	return true
}

// invalid closes the connection with 4400, naming the fault.
func (c *wsConn) invalid(why string) bool {
	c.close(closeBadRequest, "Invalid message received: "+why)
	return false
}

// init authenticates the connection by the Authorization of its
// connection_init payload, as browsers cannot set headers on an upgrade
// (without one, the upgrade's own header, checked by auth.Middleware,
// counts), starts the watch of its token, and acknowledges. A refused
// token closes with 4403.
func (c *wsConn) init(payload map[string]any) bool {
	ctx := c.ctx
	if h := authorization(payload); h != "" {
		if c.s.tokens == nil {
			c.close(closeForbidden, "Forbidden: tokens are not accepted by this server")
			return false
		}
		token := h
		if scheme, rest, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			token = strings.TrimSpace(rest)
		}
		actx, err := c.s.tokens.Authenticate(ctx, token)
		if err != nil {
			switch ae := problem.Classify(err); ae.Kind {
			case apperr.Unauthenticated:
				c.close(closeForbidden, "Forbidden: "+clipReason(ae.Error()))
			case apperr.Unavailable:
				c.close(closeTryAgainLater, "the database is unavailable; try again later")
			default:
				slog.ErrorContext(ctx, "websocket connection_init failed", "err", err)
				c.close(closeInternal, "internal server error")
			}
			return false
		}
		ctx = actx
	}
	c.ctx, c.stopWatch = c.s.watch(ctx, viewer.FromContext(ctx))
	c.acked = true
	c.write(wsMessage{Type: "connection_ack"})
	return true
}

// authorization is the Authorization entry of a connection_init payload.
func authorization(p map[string]any) string {
	for _, k := range []string{"Authorization", "authorization"} {
		if s, ok := p[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// subscribe starts operation id, unless the id is in use (4409), the
// connection has perConnection operations open, or it fails before it
// executes (an error message, which ends it).
func (c *wsConn) subscribe(id string, params *graphql.RawParams) bool {
	c.mu.Lock()
	if c.ops[id] != nil {
		c.mu.Unlock()
		c.close(closeSubscriberExists, clipReason("Subscriber for "+id+" already exists"))
		return false
	}
	if len(c.ops) >= c.s.perConnection {
		c.mu.Unlock()
		err := apperr.E(apperr.SubscriptionLimit, "this connection has %d operations open, the limit (SUBSCRIPTIONS_PER_CONNECTION); complete one first, or open another connection", c.s.perConnection)
		c.write(wsMessage{ID: id, Type: "error", Payload: mustMarshal(gqlerror.List{presentError(c.ctx, err)})})
		return true
	}
	ctx, cancel := context.WithCancel(c.ctx)
	op := &wsOp{cancel: cancel}
	c.ops[id] = op
	c.mu.Unlock()
	// The operation is prepared (parsed, validated, bounded and charged)
	// here, in the order the client sent it; it runs on its own.
	ctx = graphql.StartOperationTrace(ctx)
	params.Headers = c.headers
	params.ReadTime = graphql.TraceTiming{Start: graphql.Now(), End: graphql.Now()}
	rc, errs := c.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := c.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		c.finish(id, op, wsMessage{Type: "error", Payload: mustMarshal(resp.Errors)})
		cancel()
		return true
	}
	release := func() {}
	if rc.Operation.Operation == ast.Subscription {
		var err error
		if release, err = c.s.acquire(ctx); err != nil {
			c.finish(id, op, wsMessage{Type: "error", Payload: mustMarshal(gqlerror.List{presentError(ctx, err)})})
			cancel()
			return true
		}
	}
	go c.run(ctx, id, op, rc, release)
	return true
}

// run executes operation id and sends each result (next), then
// complete, unless the client completed it first.
func (c *wsConn) run(ctx context.Context, id string, op *wsOp, rc *graphql.OperationContext, release func()) {
	defer op.cancel()
	defer release()
	defer func() {
		if r := recover(); r != nil {
			slog.ErrorContext(ctx, "websocket operation panicked", "panic", r)
			c.finish(id, op, wsMessage{Type: "error", Payload: mustMarshal(gqlerror.List{presentError(ctx, apperr.E(apperr.Internal, "internal server error"))})})
		}
	}()
	responses, rctx := c.exec.DispatchOperation(ctx, rc)
	for {
		resp := responses(rctx)
		if resp == nil {
			break
		}
		c.mu.Lock()
		mine := c.ops[id] == op
		c.mu.Unlock()
		if !mine || c.s.check(ctx) != nil {
			// A token no longer valid ended the connection's watch:
			// serve closes it (4403).
			return
		}
		c.write(wsMessage{ID: id, Type: "next", Payload: mustMarshal(resp)})
	}
	if auth.Ended(c.ctx) != nil {
		// The token was revoked or expired: serve closes the connection
		// with 4403, which is the answer; a complete sent first would
		// tell the client the stream ended normally.
		return
	}
	c.finish(id, op, wsMessage{Type: "complete"})
}

// finish sends the last message of operation id, unless the client
// completed it (or the connection closed) first.
func (c *wsConn) finish(id string, op *wsOp, m wsMessage) {
	c.mu.Lock()
	mine := c.ops[id] == op
	if mine {
		delete(c.ops, id)
	}
	c.mu.Unlock()
	if mine {
		m.ID = id
		c.write(m)
	}
}

// write sends m; a client that does not take it within wsWriteTimeout
// is disconnected (the WebSocket library closes the connection).
func (c *wsConn) write(m wsMessage) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return
	}
	b, err := json.Marshal(m)
	if err != nil {
		slog.ErrorContext(c.ctx, "websocket message cannot be encoded", "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wsWriteTimeout)
	defer cancel()
	c.conn.Write(ctx, websocket.MessageText, b)
}

// close ends every operation and closes the connection with code and
// reason, once.
func (c *wsConn) close(code int, reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	ops := c.ops
	c.ops = map[string]*wsOp{}
	c.mu.Unlock()
	for _, op := range ops {
		op.cancel()
	}
	if code == closeNormal && reason == "" {
		c.conn.CloseNow()
		return
	}
	c.conn.Close(websocket.StatusCode(code), reason)
}

// clipReason shortens a close reason to the 123 bytes a close frame
// holds.
func clipReason(s string) string { return graph.Clip(s, 123, 123-len("…")) }

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(gqlerror.List{{Message: "internal server error", Extensions: map[string]any{"code": apperr.Internal}}})
	}
	return b
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
