package graph_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/requestid"
)

// apolloDeferAccept is the Accept header Apollo Client 4's HttpLink sends
// for an operation with @defer (Defer20220824Handler).
const apolloDeferAccept = "multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9"

// Documents of the @defer tests: each selects a configurator and defers
// its orders page, in one of the ways @defer can be written; plainDoc is
// the same selection without it.
const (
	plainDoc         = `query Deferred { viewer { configurator { id name orders(first: 3) { totalCount edges { node { id price } } } } } }`
	deferInlineDoc   = `query Deferred { viewer { configurator { id name ... @defer(label: "orders") { orders(first: 3) { totalCount edges { node { id price } } } } } } }`
	deferSpreadDoc   = `query Deferred { viewer { configurator { id name ...Orders @defer } } } fragment Orders on Configurator { orders(first: 3) { totalCount edges { node { id price } } } }`
	deferVariableDoc = `query Deferred($d: Boolean!) { viewer { configurator { id name ... @defer(if: $d) { orders(first: 3) { totalCount edges { node { id price } } } } } } }`
)

// TestDeferDirect: an operation with @defer sent to this service directly
// is answered as one result with the deferred fields filled in (the
// incremental-delivery proposal lets a server deliver deferred fields in
// its initial result), on every transport and whatever the client
// accepts: the same data as without @defer, no hasNext, no null where a
// deferred field was. Apollo Client 4 and urql, which accept an
// incremental answer, take a single one as the complete result.
func TestDeferDirect(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		srv := httptest.NewServer(requestid.Middleware()(w.h))
		defer srv.Close()
		want := wantData(t, "without @defer", send(t, w.h, http.MethodPost, w.tokA, map[string]any{"query": plainDoc}))
		if !strings.Contains(want, `"totalCount":8`) {
			t.Fatalf("without @defer: %s; want configurator a1's 8 orders", want)
		}
		docs := map[string]map[string]any{
			"inline fragment": {"query": deferInlineDoc},
			"fragment spread": {"query": deferSpreadDoc},
			"if: true":        {"query": deferVariableDoc, "variables": map[string]any{"d": true}},
			"if: false":       {"query": deferVariableDoc, "variables": map[string]any{"d": false}},
		}
		for name, req := range docs {
			for _, accept := range []string{"", "application/json", "application/graphql-response+json", apolloDeferAccept, urqlAccept} {
				body, _ := json.Marshal(req)
				r, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(string(body)))
				r.Header.Set("Content-Type", "application/json")
				deferAnswer(t, name+", POST, Accept "+accept, r, accept, w.tokA, want)
			}
			q := url.Values{"query": {req["query"].(string)}}
			if v, ok := req["variables"]; ok {
				b, _ := json.Marshal(v)
				q.Set("variables", string(b))
			}
			r, _ := http.NewRequest(http.MethodGet, srv.URL+"/graphql?"+q.Encode(), nil)
			deferAnswer(t, name+", GET", r, apolloDeferAccept, w.tokA, want)
		}
		deferOverStreams(t, w, srv.URL, want)
	})
}

// deferAnswer sends r with accept and token and fails unless its answer is
// 200, one JSON body with data want and nothing incremental.
func deferAnswer(t *testing.T, what string, r *http.Request, accept, token, want string) {
	t.Helper()
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	r.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	ct := res.Header.Get("Content-Type")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "application/") {
		t.Errorf("%s: %d %s %s; want 200 with one JSON body", what, res.StatusCode, ct, body)
		return
	}
	var got struct {
		Data    json.RawMessage `json:"data"`
		Errors  []gqlError      `json:"errors"`
		HasNext *bool           `json:"hasNext"`
	}
	if err := json.Unmarshal(body, &got); err != nil || len(got.Errors) > 0 || got.HasNext != nil || string(got.Data) != want {
		t.Errorf("%s: %s\nwant {\"data\":%s} (the deferred fields in the one result, no hasNext)", what, body, want)
	}
}

// deferOverStreams checks the answer to a deferred query over Server-Sent
// Events and over a WebSocket: one next message with the whole result,
// then complete.
func deferOverStreams(t *testing.T, w *world, base, want string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": deferInlineDoc})
	r, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(string(body)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "text/event-stream")
	r.Header.Set("Authorization", "Bearer "+w.tokA)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	var nexts []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" {
			nexts = append(nexts, data)
		}
	}
	res.Body.Close()
	if len(nexts) != 1 || nexts[0] != `{"data":`+want+`}` {
		t.Errorf("over Server-Sent Events: %d next events %q; want one, {\"data\":%s}", len(nexts), nexts, want)
	}

	ws := dialWS(t, base, w.tokA)
	ws.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": deferInlineDoc}})
	var msgs []string
	for {
		m := ws.read(10 * time.Second)
		if m == nil {
			t.Fatalf("over a WebSocket: no complete after %q", msgs)
		}
		if m["type"] == "complete" {
			break
		}
		b, _ := json.Marshal(m["payload"])
		msgs = append(msgs, string(b))
	}
	var wantAny any
	json.Unmarshal([]byte(`{"data":`+want+`}`), &wantAny)
	wantCanon, _ := json.Marshal(wantAny)
	if len(msgs) != 1 || msgs[0] != string(wantCanon) {
		t.Errorf("over a WebSocket: %d next messages %q; want one, {\"data\":%s}", len(msgs), msgs, want)
	}
}
