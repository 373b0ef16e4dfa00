package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/internal/dbtest"
)

// anonymousProbes are documents an anonymous caller may send next to an
// allowed share-link read (operation A): each holds a fault whose
// validation message names the schema (a field, a type, an argument)
// or suggests a name.
var anonymousProbes = map[string]string{
	"second operation":           `query A { sharedConfigurator(key: "k") { name } } query B { ordrs { id } }`,
	"second operation, valid":    `query A { sharedConfigurator(key: "k") { name } } query B { orders { totalCount } }`,
	"second operation, mutation": `query A { sharedConfigurator(key: "k") { name } } mutation B { createOrdr { id } }`,
	"unused fragment":            `query A { sharedConfigurator(key: "k") { name } } fragment F on Query { ordrs { id } }`,
	"unused fragment, bad type":  `query A { sharedConfigurator(key: "k") { name } } fragment F on Ordr { id }`,
	"unknown field in fragment":  `query A { sharedConfigurator(key: "k") { ...F } } fragment F on SharedConfigurator { nme }`,
	"inline fragment type":       `query A { sharedConfigurator(key: "k") { ... on SharedConfigurato { name } } }`,
	"unknown argument":           `query A { sharedConfigurator(key: "k", kye: "k") { name } }`,
	"unknown field":              `query A { sharedConfigurator(key: "k") { nam } }`,
	"subselection of a leaf":     `query A { sharedConfigurator(key: "k") { name { x } } }`,
	"missing subselection":       `query A { sharedConfigurator(key: "k") { options } }`,
	"variable of unknown type":   `query A($k: Strng!) { sharedConfigurator(key: $k) { name } }`,
	"variable of input type":     `query A($k: OrderWhereInpt) { sharedConfigurator(key: "k") { name } }`,
	"unknown directive":          `query A { sharedConfigurator(key: "k") @skp(if: true) { name } }`,
	"directive argument":         `query A { sharedConfigurator(key: "k") @include(iff: true) { name } }`,
	"argument of the wrong type": `query A { sharedConfigurator(key: 1) { name } }`,
}

// schemaNames are the names the schema's errors could tell: its types
// and the fields of its root types, quoted as gqlparser quotes them.
func schemaNames() []string {
	s := generated.NewExecutableSchema(generated.Config{}).Schema()
	var names []string
	for name, def := range s.Types {
		if strings.HasPrefix(name, "__") {
			continue
		}
		names = append(names, `\"`+name+`\"`)
		if def == s.Query || def == s.Mutation || def == s.Subscription || name == "SharedConfigurator" {
			for _, f := range def.Fields {
				if !strings.HasPrefix(f.Name, "__") {
					names = append(names, `\"`+f.Name+`\"`)
				}
			}
		}
	}
	return names
}

// leak returns what of the schema answer tells: a suggestion or a quoted
// name, "" when none.
func leak(answer string, names []string) string {
	if strings.Contains(answer, "Did you mean") {
		return "a suggestion"
	}
	for _, n := range names {
		if strings.Contains(answer, n) {
			return "the name " + n
		}
	}
	return ""
}

// TestAnonymousLearnsNothingOfTheSchema: whatever fault an anonymous
// document holds, in whatever operation or fragment, its answer names
// nothing of the schema and suggests nothing, over POST, GET, a
// WebSocket and SSE; a token holder's answer to the same documents keeps
// the validation messages (suggestions included).
func TestAnonymousLearnsNothingOfTheSchema(t *testing.T) {
	names := schemaNames()
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		w := newWorld(t, c)
		srv := httptest.NewServer(w.h)
		defer srv.Close()
		suggested := 0
		for name, doc := range anonymousProbes {
			for transport, ask := range map[string]func(t *testing.T, base, token, doc string) string{
				"POST": postAnswer, "GET": getAnswer, "WebSocket": socketAnswer, "SSE": sseAnswer,
			} {
				if got := ask(t, srv.URL, "", doc); leak(got, names) != "" {
					t.Errorf("%s over %s, anonymous: %s tells %s; want nothing of the schema", name, transport, got, leak(got, names))
				} else if !strings.Contains(got, `"message"`) {
					t.Errorf("%s over %s, anonymous: %s; want errors", name, transport, got)
				}
			}
			if got := postAnswer(t, srv.URL, w.tokA, doc); strings.Contains(got, "Did you mean") {
				suggested++
			}
		}
		if suggested < 5 {
			t.Errorf("a token holder had suggestions for %d of the documents; want them kept (at least 5)", suggested)
		}
	})
}

func postAnswer(t *testing.T, base, token, doc string) string {
	body, _ := json.Marshal(map[string]any{"query": doc, "operationName": "A"})
	req, _ := http.NewRequest(http.MethodPost, base, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return answerOf(t, req, token)
}

func getAnswer(t *testing.T, base, token, doc string) string {
	req, _ := http.NewRequest(http.MethodGet, base+"?"+url.Values{"query": {doc}, "operationName": {"A"}}.Encode(), nil)
	return answerOf(t, req, token)
}

func sseAnswer(t *testing.T, base, token, doc string) string {
	body, _ := json.Marshal(map[string]any{"query": doc, "operationName": "A"})
	req, _ := http.NewRequest(http.MethodPost, base, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return answerOf(t, req, token)
}

func answerOf(t *testing.T, req *http.Request, token string) string {
	t.Helper()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func socketAnswer(t *testing.T, base, token, doc string) string {
	t.Helper()
	ws := dialRaw(t, base)
	ws.send(map[string]any{"type": "connection_init"})
	if m := ws.read(5 * time.Second); m["type"] != "connection_ack" {
		t.Fatalf("connection_init: %v; want connection_ack", m)
	}
	ws.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": doc, "operationName": "A"}})
	m := ws.read(5 * time.Second)
	ws.conn.CloseNow()
	return string(mustJSON(m))
}
