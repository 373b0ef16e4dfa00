package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/config"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/idempotency"
	"github.com/configurator/catalogue/internal/storage"
	"github.com/configurator/catalogue/internal/testkit"
)

// orderReq is an order creation as a client sends it, on either
// transport.
type orderReq struct {
	configurator int
	price        string
	details      string // customer_details, a JSON object
	snapshot     []byte // a PNG, or nil
}

// rest is the order as POST /api/open-api/v1/orders.
func (o orderReq) rest(base, token, key string) *http.Request {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("configurator_id", fmt.Sprint(o.configurator))
	mw.WriteField("price", o.price)
	mw.WriteField("customer_details", o.details)
	mw.WriteField("configurator_summary", `{"Frame":"Grand"}`)
	if o.snapshot != nil {
		fw, _ := mw.CreateFormFile("configurator_snapshot", "snap.png")
		fw.Write(o.snapshot)
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/open-api/v1/orders", bytes.NewReader(body.Bytes()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return withAuth(req, token, key)
}

// createOrderGQL is the createOrder mutation the tests send.
const createOrderGQL = `mutation($in: CreateOrderInput!) { createOrder(input: $in) { id price customerDetails configurator { id } } }`

// graphql is the order as the createOrder mutation, a multipart request
// (the GraphQL multipart request spec) when it has a snapshot.
func (o orderReq) graphql(base, token, key string) *http.Request {
	in := map[string]any{
		"configuratorID": fmt.Sprint(o.configurator), "price": json.RawMessage(o.price),
		"customerDetails": json.RawMessage(o.details), "configuratorSummary": map[string]string{"Frame": "Grand"},
	}
	var req *http.Request
	if o.snapshot == nil {
		ops, _ := json.Marshal(map[string]any{"query": createOrderGQL, "variables": map[string]any{"in": in}})
		req, _ = http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(ops))
		req.Header.Set("Content-Type", "application/json")
	} else {
		in["configuratorSnapshot"] = nil
		ops, _ := json.Marshal(map[string]any{"query": createOrderGQL, "variables": map[string]any{"in": in}})
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("operations", string(ops))
		mw.WriteField("map", `{"0":["variables.in.configuratorSnapshot"]}`)
		fw, _ := mw.CreateFormFile("0", "snap.png")
		fw.Write(o.snapshot)
		mw.Close()
		req, _ = http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body.Bytes()))
		req.Header.Set("Content-Type", mw.FormDataContentType())
	}
	return withAuth(req, token, key)
}

func withAuth(req *http.Request, token, key string) *http.Request {
	req.Header.Set("Authorization", "Bearer "+token)
	if key != "" {
		req.Header.Set(idempotency.Header, key)
	}
	return req
}

// answer is a response as the tests judge it: status, headers, body and,
// whichever the transport, the created order's id or the error code.
type answer struct {
	status int
	header http.Header
	body   string
	id     int
	code   string
	detail string
}

// send sends req and reads its answer on either transport: a REST order
// or problem, or a GraphQL createOrder result or its first error.
func send(t *testing.T, client *http.Client, req *http.Request) answer {
	t.Helper()
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, header: res.Header, body: string(raw)}
	a.id, a.code, a.detail = orderOrError(raw)
	return a
}

// orderOrError reads the order id or the error code and message of a REST
// or GraphQL body.
func orderOrError(raw []byte) (id int, code, detail string) {
	var v struct {
		ID     int    `json:"id"`
		Code   string `json:"code"`
		Detail string `json:"detail"`
		Data   struct {
			CreateOrder struct {
				ID string `json:"id"`
			} `json:"createOrder"`
		} `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	json.Unmarshal(raw, &v)
	if v.Data.CreateOrder.ID != "" {
		fmt.Sscan(v.Data.CreateOrder.ID, &v.ID)
	}
	var gqlErrs []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code string `json:"code"`
		} `json:"extensions"`
	}
	if json.Unmarshal(v.Errors, &gqlErrs) == nil && len(gqlErrs) > 0 && gqlErrs[0].Message != "" {
		v.Code, v.Detail = gqlErrs[0].Extensions.Code, gqlErrs[0].Message
	}
	return v.ID, v.Code, v.Detail
}

// TestIdempotencyKey: POST /orders and createOrder with an Idempotency-Key
// create one order per owner and key; a retry gets the first answer with
// Idempotent-Replayed: true, the same key with another request is 422,
// concurrent retries wait for the first and get its order, another
// owner's equal key is its own, and a malformed key is 400 naming the
// header. On both transports, through the router as serve wires it.
func TestIdempotencyKey(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		tokens, owner1 := seeded(t, c)
		owner2, _ := dbtest.OpenAPI(t, tokens, 3)
		files := &storage.Files{Store: storage.NewMemory(), BaseURL: "http://localhost/files/"}
		cfg := &config.Config{PublicURL: "http://localhost", ViewerURL: "http://localhost/share/", RequestTimeout: config.DefaultRequestTimeout}
		srv := httptest.NewServer(newRouter(c, tokens, cfg, files, slog.New(slog.NewTextHandler(io.Discard, nil))))
		defer srv.Close()
		client := srv.Client()
		orders := func() int {
			return c.Order.Query().CountX(dbtest.Sys)
		}

		for _, tr := range []struct {
			name    string
			req     func(o orderReq, token, key string) *http.Request
			created int // the status of a created order
		}{
			{"rest", func(o orderReq, token, key string) *http.Request { return o.rest(srv.URL, token, key) }, http.StatusCreated},
			{"graphql", func(o orderReq, token, key string) *http.Request { return o.graphql(srv.URL, token, key) }, http.StatusOK},
		} {
			t.Run(tr.name, func(t *testing.T) {
				order := orderReq{configurator: 1, price: "249.9", details: `{"name":"Ada","client":"` + tr.name + `"}`, snapshot: testkit.PNG(8, 8, uint8(1))}
				key := "order-" + tr.name
				before := orders()
				first := send(t, client, tr.req(order, owner1, key))
				if first.status != tr.created || first.id == 0 || first.header.Get(idempotency.ReplayedHeader) != "" {
					t.Fatalf("first request: %d %s, %s=%q; want %d with an order, not replayed",
						first.status, first.body, idempotency.ReplayedHeader, first.header.Get(idempotency.ReplayedHeader), tr.created)
				}
				retry := send(t, client, tr.req(order, owner1, key))
				if retry.status != first.status || retry.body != first.body || retry.header.Get(idempotency.ReplayedHeader) != "true" {
					t.Errorf("retry: %d %s, %s=%q; want the first answer (%d %s) replayed",
						retry.status, retry.body, idempotency.ReplayedHeader, retry.header.Get(idempotency.ReplayedHeader), first.status, first.body)
				}
				if tr.name == "rest" && retry.header.Get("Location") != first.header.Get("Location") {
					t.Errorf("retry Location %q; want %q", retry.header.Get("Location"), first.header.Get("Location"))
				}
				if n := orders(); n != before+1 {
					t.Errorf("%d orders after a request and its retry; want %d", n, before+1)
				}

				// The same key with another request: other fields, or
				// another file.
				wantReused := http.StatusUnprocessableEntity
				if tr.name == "graphql" {
					wantReused = http.StatusOK // an execution error of GraphQL
				}
				other := order
				other.price = "250"
				otherFile := order
				otherFile.snapshot = testkit.PNG(8, 8, uint8(2))
				for name, o := range map[string]orderReq{"another price": other, "another snapshot": otherFile} {
					a := send(t, client, tr.req(o, owner1, key))
					if a.status != wantReused || a.code != "IDEMPOTENCY_KEY_REUSED" || !strings.Contains(a.detail, idempotency.Header) {
						t.Errorf("%s under the same key: %d %s; want %d IDEMPOTENCY_KEY_REUSED naming the header", name, a.status, a.body, wantReused)
					}
				}

				// Another owner's equal key is another key.
				theirs := order
				theirs.configurator = 3
				a := send(t, client, tr.req(theirs, owner2, key))
				if a.status != tr.created || a.id == 0 || a.id == first.id || a.header.Get(idempotency.ReplayedHeader) != "" {
					t.Errorf("another owner's equal key: %d %s; want a new order", a.status, a.body)
				}

				// Malformed keys: 400 naming the header, before anything
				// is created.
				before = orders()
				for name, bad := range map[string]string{"256 characters": strings.Repeat("k", 256), "not ASCII": "clé"} {
					a := send(t, client, tr.req(order, owner1, bad))
					if a.status != http.StatusBadRequest || !strings.Contains(a.detail, idempotency.Header) {
						t.Errorf("key of %s: %d %s; want 400 naming %s", name, a.status, a.body, idempotency.Header)
					}
					if tr.name == "rest" && !strings.Contains(a.body, `"name":"Idempotency-Key"`) {
						t.Errorf("key of %s: %s; want errors naming %s", name, a.body, idempotency.Header)
					}
				}
				long := send(t, client, tr.req(order, owner1, tr.name+strings.Repeat("k", idempotency.MaxKeyLen-len(tr.name))))
				if long.status != tr.created || long.id == 0 {
					t.Errorf("a key of %d characters: %d %s; want an order", idempotency.MaxKeyLen, long.status, long.body)
				}
				if n := orders(); n != before+1 {
					t.Errorf("%d orders after malformed keys and one of %d characters; want %d", n, idempotency.MaxKeyLen, before+1)
				}

				// Concurrent requests with one key wait for the first and
				// all get its order.
				before = orders()
				concurrent := order
				concurrent.details = `{"name":"Concurrent","client":"` + tr.name + `"}`
				const n = 8
				answers := make([]answer, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						answers[i] = send(t, client, tr.req(concurrent, owner1, "concurrent-"+tr.name))
					}()
				}
				wg.Wait()
				replays := 0
				for i, a := range answers {
					if a.status != tr.created || a.id != answers[0].id || a.id == 0 {
						t.Errorf("concurrent request %d: %d %s; want the order %d", i, a.status, a.body, answers[0].id)
					}
					if a.header.Get(idempotency.ReplayedHeader) == "true" {
						replays++
					}
				}
				if got := orders(); got != before+1 || replays != n-1 {
					t.Errorf("%d concurrent requests with one key: %d orders, %d replays; want 1 order, %d replays", n, got-before, replays, n-1)
				}

				// Without a key every request creates an order.
				before = orders()
				send(t, client, tr.req(order, owner1, ""))
				send(t, client, tr.req(order, owner1, ""))
				if got := orders(); got != before+2 {
					t.Errorf("two requests without a key: %d orders; want 2", got-before)
				}
			})
		}

		// The key names the request, whichever transport carries it: a
		// GraphQL retry of a REST order gets that order.
		order := orderReq{configurator: 1, price: "99.5", details: `{"name":"Both"}`, snapshot: testkit.PNG(8, 8, uint8(3))}
		viaREST := send(t, client, order.rest(srv.URL, owner1, "both"))
		viaGQL := send(t, client, order.graphql(srv.URL, owner1, "both"))
		if viaREST.id == 0 || viaGQL.id != viaREST.id || viaGQL.header.Get(idempotency.ReplayedHeader) != "true" {
			t.Errorf("REST then GraphQL with one key: orders %d and %d (%s); want one order, replayed", viaREST.id, viaGQL.id, viaGQL.body)
		}
	})
}
