package graph

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/viewer"
)

// maxAnonymousBody bounds what is read of an anonymous request to decide
// whether it is introspection; GraphiQL's introspection query is ~2 KB.
const maxAnonymousBody = 64 << 10

// IntrospectionOnlyWithoutToken answers 401 to a request without a viewer
// unless its operation only introspects the schema (__schema, __type,
// __typename) or reads share links (sharedConfigurator, whose key is its
// own credential), so that the playground can load the schema before a
// token is pasted and a share link's front-end needs no token, while any
// other data access without a token is a 401.
func IntrospectionOnlyWithoutToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if viewer.FromContext(r.Context()) != nil || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		query, operation, ok := readOperation(r)
		if !ok || !introspectionOnly(query, operation) {
			RejectAuth(w, r, apperr.ErrNoToken)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readOperation returns the query and operation name of a GET or JSON POST
// request, restoring the body for the next handler.
func readOperation(r *http.Request) (query, operation string, ok bool) {
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		return q.Get("query"), q.Get("operationName"), true
	case http.MethodPost:
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			return "", "", false
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxAnonymousBody+1))
		if err != nil || len(body) > maxAnonymousBody {
			return "", "", false
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var p struct {
			Query         string `json:"query"`
			OperationName string `json:"operationName"`
		}
		if json.Unmarshal(body, &p) != nil {
			return "", "", false
		}
		return p.Query, p.OperationName, true
	}
	return "", "", false
}

// anonymousFields are the root query fields an operation without a token
// may select.
var anonymousFields = map[string]bool{
	"__schema": true, "__type": true, "__typename": true, "sharedConfigurator": true,
}

// introspectionOnly reports whether the chosen operation of query selects
// nothing but introspection fields at its root.
func introspectionOnly(query, operation string) bool {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return false
	}
	op := doc.Operations.ForName(operation)
	if op == nil && operation == "" && len(doc.Operations) == 1 {
		op = doc.Operations[0]
	}
	if op == nil || op.Operation != ast.Query || len(op.SelectionSet) == 0 {
		return false
	}
	for _, sel := range op.SelectionSet {
		f, ok := sel.(*ast.Field)
		if !ok || !anonymousFields[f.Name] {
			return false
		}
	}
	return true
}
