package graph_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/order"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/requestid"
)

// urqlAccept is the Accept header urql's fetchExchange sends on every
// request (@urql/core 6).
const urqlAccept = "application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed"

// syncBuffer is a buffer the log writes into while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestNegotiation: the answer to a request over GraphQL over HTTP is
// chosen once from its Accept header (q values and order) whatever the
// transport: JSON whenever the client accepts it at least as much as an
// event stream (urql's default Accept included, with the ETag and length
// of every JSON answer), an event stream when preferred or the only one
// accepted, and a subscription sent over a request that accepts JSON only
// is refused at once with SUBSCRIPTION_NEEDS_STREAM; the same
// subscription with urql's Accept streams its events.
func TestNegotiation(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		hub := events.NewHub(nil)
		w.withEvents(t, hub)
		srv := httptest.NewServer(requestid.Middleware()(w.h))
		defer srv.Close()
		const query = `{"query":"{ viewer { ownerID } }"}`
		for _, tc := range []struct {
			name, method, accept, want string
		}{
			{"urql", "POST", urqlAccept, "application/graphql-response+json"},
			{"urql, GET", "GET", urqlAccept, "application/graphql-response+json"},
			{"graphql-response refused by q=0", "POST", "application/graphql-response+json;q=0, application/json", "application/json"},
			{"graphql-response ranked lower", "POST", "application/graphql-response+json;q=0.5, application/json", "application/json"},
			{"json first", "POST", "application/json, application/graphql-response+json", "application/json"},
			{"graphql-response first", "POST", "application/graphql-response+json, application/json", "application/graphql-response+json"},
			{"wildcard", "POST", "*/*", "application/json"},
			{"none", "POST", "", "application/json"},
			{"json and stream, equal", "POST", "application/json, text/event-stream", "application/json"},
			{"stream preferred", "POST", "application/json;q=0.5, text/event-stream", "text/event-stream"},
			{"stream only", "POST", "text/event-stream", "text/event-stream"},
			{"stream, json refused", "POST", "text/event-stream, application/json;q=0, */*;q=0", "text/event-stream"},
			{"stream refused", "POST", "text/event-stream;q=0, application/json", "application/json"},
			{"nothing acceptable", "POST", "application/json;q=0, text/event-stream;q=0", "406"},
			{"stream on GET", "GET", "text/event-stream", "406"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var req *http.Request
				if tc.method == "GET" {
					req, _ = http.NewRequest("GET", srv.URL+"/graphql?query="+url.QueryEscape("{ viewer { ownerID } }"), nil)
				} else {
					req, _ = http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(query))
					req.Header.Set("Content-Type", "application/json")
				}
				if tc.accept != "" {
					req.Header.Set("Accept", tc.accept)
				}
				req.Header.Set("Authorization", "Bearer "+w.tokA)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				ct := res.Header.Get("Content-Type")
				if tc.want == "406" {
					if res.StatusCode != http.StatusNotAcceptable || !strings.Contains(string(body), `"code":"NOT_ACCEPTABLE"`) {
						t.Errorf("%d %s %s; want 406 NOT_ACCEPTABLE", res.StatusCode, ct, body)
					}
					return
				}
				if res.StatusCode != http.StatusOK || ct != tc.want {
					t.Fatalf("%d %s %s; want 200 %s", res.StatusCode, ct, body, tc.want)
				}
				if tc.want == "text/event-stream" {
					if !strings.Contains(string(body), "event: next\ndata: {\"data\":{\"viewer\":{\"ownerID\"") || !strings.Contains(string(body), "event: complete") {
						t.Errorf("stream %q; want a next event with the data, then complete", body)
					}
					return
				}
				if !strings.HasPrefix(string(body), `{"data":{"viewer":{"ownerID":`) {
					t.Errorf("body %s", body)
				}
				if res.Header.Get("Content-Length") == "" {
					t.Errorf("a JSON answer without Content-Length")
				}
				if tc.method == "GET" && res.Header.Get("ETag") == "" {
					t.Errorf("a GET query answered without an ETag")
				}
			})
		}

		const sub = `{"query":"subscription { events(types: [\"order.updated\"]) { type order { id status } } }"}`
		for _, accept := range []string{"application/graphql-response+json", "application/json", ""} {
			req, _ := http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(sub))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+w.tokA)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			start := time.Now()
			res, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				cancel()
				t.Fatalf("subscription over plain POST (Accept %q): %v", accept, err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			cancel()
			took := time.Since(start)
			var r struct {
				Errors []struct {
					Message    string
					Extensions map[string]any
				}
			}
			json.Unmarshal(body, &r)
			if res.StatusCode != http.StatusBadRequest || len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != "SUBSCRIPTION_NEEDS_STREAM" ||
				r.Errors[0].Extensions["requestId"] == nil || took > time.Second {
				t.Errorf("subscription over plain POST (Accept %q): %d %s after %v; want 400 SUBSCRIPTION_NEEDS_STREAM with a requestId within a second", accept, res.StatusCode, body, took)
			} else if m := r.Errors[0].Message; !strings.Contains(m, "WebSocket") || !strings.Contains(m, "graphql-transport-ws") || !strings.Contains(m, "Accept: text/event-stream") {
				t.Errorf("message %q; want both ways to subscribe named", m)
			}
		}

		// urql's Accept names the stream: a subscription gets it.
		req, _ := http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(sub))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+w.tokA)
		req.Header.Set("Accept", urqlAccept)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("subscription with urql's Accept: %d %s; want 200 text/event-stream", res.StatusCode, res.Header.Get("Content-Type"))
		}
		deadline := time.Now().Add(5 * time.Second)
		for hub.Len() < 1 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		dctx := dbtest.Sys
		mine := c.Order.Query().Where(order.OwnerID(w.a.ID)).FirstIDX(dctx)
		w.ok(t, w.dashA, `mutation($id: ID!) { updateOrder(id: $id, input: {status: "shipped"}) { id } }`, map[string]any{"id": mine}, &struct{}{})
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if !strings.Contains(data, `"type":"order.updated"`) || !strings.Contains(data, `"status":"shipped"`) {
					t.Errorf("event %s; want the order's update", data)
				}
				return
			}
		}
		t.Errorf("the stream ended without an event: %v", sc.Err())
	})
}

// TestMalformedRequests: a request that is not a GraphQL request, on any
// transport (JSON with or without Accept: text/event-stream, multipart,
// a WebSocket upgrade), is answered in JSON with extensions.code and
// requestId, like every other error, and neither the answer nor the log
// quotes more than a short clip of what the client sent. A request
// without a token over Server-Sent Events gets its coded error as the
// stream's event, as GraphQL over Server-Sent Events asks.
func TestMalformedRequests(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		srv := httptest.NewServer(requestid.Middleware()(w.h))
		defer srv.Close()
		logs := &syncBuffer{}
		defer log.SetOutput(log.Writer())
		log.SetOutput(logs)
		// A long input that must not come back: 97 KB, as the issue's.
		marker := "SECRETINPUT"
		long := strings.Repeat(marker, 97_000/len(marker))

		multipartBody := func(first, content string) (string, *bytes.Buffer) {
			var b bytes.Buffer
			mw := multipart.NewWriter(&b)
			fw, _ := mw.CreateFormField(first)
			fw.Write([]byte(content))
			mw.Close()
			return mw.FormDataContentType(), &b
		}
		for _, tc := range []struct {
			name   string
			build  func() *http.Request
			status int
			code   string
		}{
			{"malformed JSON", func() *http.Request {
				r, _ := http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(`{"query": "`+long))
				r.Header.Set("Content-Type", "application/json")
				return r
			}, 400, "BAD_REQUEST"},
			{"malformed JSON, Accept: text/event-stream", func() *http.Request {
				r, _ := http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(`{"query": `+long))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "text/event-stream")
				return r
			}, 400, "BAD_REQUEST"},
			{"malformed JSON, urql", func() *http.Request {
				r, _ := http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(long))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", urqlAccept)
				return r
			}, 400, "BAD_REQUEST"},
			{"variables not an object, GET", func() *http.Request {
				r, _ := http.NewRequest("GET", srv.URL+"/graphql?query=%7B__typename%7D&variables="+url.QueryEscape(long), nil)
				return r
			}, 400, "BAD_REQUEST"},
			{"multipart without operations first", func() *http.Request {
				ct, b := multipartBody("map", long)
				r, _ := http.NewRequest("POST", srv.URL+"/graphql", b)
				r.Header.Set("Content-Type", ct)
				return r
			}, 400, "BAD_REQUEST"},
			{"multipart with malformed operations", func() *http.Request {
				ct, b := multipartBody("operations", long)
				r, _ := http.NewRequest("POST", srv.URL+"/graphql", b)
				r.Header.Set("Content-Type", ct)
				return r
			}, 400, "BAD_REQUEST"},
			{"multipart, not a form", func() *http.Request {
				r, _ := http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(long))
				r.Header.Set("Content-Type", "multipart/form-data; boundary=x")
				return r
			}, 400, "BAD_REQUEST"},
			{"WebSocket upgrade without Sec-WebSocket-Key", func() *http.Request {
				r, _ := http.NewRequest("GET", srv.URL+"/graphql", nil)
				r.Header.Set("Connection", "Upgrade")
				r.Header.Set("Upgrade", "websocket")
				r.Header.Set("Sec-WebSocket-Version", "13")
				r.Header.Set("Sec-WebSocket-Protocol", "graphql-transport-ws")
				return r
			}, 400, "BAD_REQUEST"},
			{"WebSocket upgrade with a bad key", func() *http.Request {
				r, _ := http.NewRequest("GET", srv.URL+"/graphql", nil)
				r.Header.Set("Connection", "Upgrade")
				r.Header.Set("Upgrade", "websocket")
				r.Header.Set("Sec-WebSocket-Version", "13")
				r.Header.Set("Sec-WebSocket-Key", long[:2000])
				return r
			}, 400, "BAD_REQUEST"},
			{"Content-Type not served", func() *http.Request {
				r, _ := http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(`{}`))
				r.Header.Set("Content-Type", "text/"+long[:3000])
				return r
			}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req := tc.build()
				req.Header.Set("Authorization", "Bearer "+w.tokA)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				var r struct {
					Errors []struct {
						Message    string
						Extensions map[string]any
					}
				}
				err = json.Unmarshal(body, &r)
				if res.StatusCode != tc.status || err != nil || !strings.Contains(res.Header.Get("Content-Type"), "json") ||
					len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != tc.code || r.Errors[0].Extensions["requestId"] == nil {
					t.Fatalf("%d %s %.300s; want %d, one JSON error %s with a requestId", res.StatusCode, res.Header.Get("Content-Type"), body, tc.status, tc.code)
				}
				if len(body) > 1000 || strings.Count(string(body), marker) > 7 {
					t.Errorf("the answer quotes the input: %d bytes, %.300s", len(body), body)
				}
			})
		}
		if n := strings.Count(logs.String(), marker); n > 7 {
			t.Errorf("the log quotes the input (%d times): %.300s", n, logs.String())
		}

		// No token over Server-Sent Events: a coded error in the stream.
		req, _ := http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(`{"query":"{ viewer { ownerID } }"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		_, data, _ := strings.Cut(string(body), "event: next\ndata: ")
		data, _, _ = strings.Cut(data, "\n")
		var r struct {
			Errors []struct{ Extensions map[string]any }
		}
		if res.Header.Get("Content-Type") != "text/event-stream" || json.Unmarshal([]byte(data), &r) != nil || len(r.Errors) == 0 ||
			r.Errors[0].Extensions["code"] != "UNAUTHENTICATED" || r.Errors[0].Extensions["requestId"] == nil || !strings.Contains(string(body), "event: complete") {
			t.Errorf("no token over SSE: %d %s %q; want a stream with one next event holding UNAUTHENTICATED and a requestId, then complete", res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	})
}
