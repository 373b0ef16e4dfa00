package endpoint

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestWriteResponse: writeResponse writes what encoding/json writes for a
// graphql.Response, except that it does not re-escape <, > and & inside
// data, whether the query came by POST or by GET (which adds a validator
// to an answer without errors).
func TestWriteResponse(t *testing.T) {
	yes := true
	for _, resp := range []*graphql.Response{
		nil, // gqlgen's answer to a request whose context ended before it ran
		{Data: json.RawMessage(`{"a":1}`)},
		{},
		{Data: json.RawMessage(`null`)},
		{Errors: gqlerror.List{{Message: "no", Path: ast.Path{ast.PathName("a"), ast.PathIndex(2)}, Extensions: map[string]any{"code": "NOT_FOUND"}}}, Data: json.RawMessage(`{"a":null}`)},
		{Data: json.RawMessage(`{"a":"b"}`), Extensions: map[string]any{"cost": 3, "x": []int{1}}},
		{Errors: gqlerror.List{{Message: "x"}}, Data: json.RawMessage(`{}`), Extensions: map[string]any{"k": "v"}},
		{Data: json.RawMessage(`{"a":1}`), Label: "l", Path: ast.Path{ast.PathName("p")}, HasNext: &yes},
	} {
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			got := httptest.NewRecorder()
			writeResponse(got, httptest.NewRequest(method, "/graphql", nil), mediaJSON, resp)
			want, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Body.Bytes(), want) {
				t.Errorf("%s: writeResponse = %s\nencoding/json: %s", method, got.Body.Bytes(), want)
			}
			// The length is declared, so the answer is not chunked; but not
			// for the bare null, which Outage may replace.
			if cl := got.Header().Get("Content-Length"); resp != nil && cl != strconv.Itoa(len(want)) {
				t.Errorf("%s: Content-Length %q for a body of %d bytes", method, cl, len(want))
			}
			// Only a GET answer without errors (nor a deferred part) is
			// revalidatable.
			cacheable := method == http.MethodGet && resp != nil && len(resp.Errors) == 0 && resp.Label == ""
			if etag := got.Header().Get("ETag"); (etag != "") != cacheable {
				t.Errorf("%s %s: ETag %q; want one: %v", method, want, etag, cacheable)
			}
		}
	}
	got := httptest.NewRecorder()
	writeResponse(got, httptest.NewRequest(http.MethodPost, "/graphql", nil), mediaJSON, &graphql.Response{Data: json.RawMessage(`{"html":"<b>&</b>"}`)})
	if want := `{"data":{"html":"<b>&</b>"}}`; got.Body.String() != want {
		t.Errorf("writeResponse = %s; want %s", got.Body.Bytes(), want)
	}
}
