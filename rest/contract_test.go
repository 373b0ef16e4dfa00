package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/go-chi/chi/v5"
)

// The served OpenAPI document (openapi.json) is the one description of
// REST v1; the route table (routes) and the input readers (input.go) are
// written out by hand, so that a reader follows a route to its handler and
// its input in one hop. This file reads the document and holds the code to
// it: every operation has its route and no route is undocumented, the
// operations that need a token answer 401 without one in their own
// format, each reader reads exactly the query parameters the document
// names (and refuses the ones it refuses), and each sort lists the
// document's values. openapi_test.go checks real answers against the
// document's schemas.

// document is the part of an OpenAPI 3.1 document the contract reads.
type document struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Parameters map[string]*docParameter `json:"parameters"`
		Schemas    map[string]*docSchema    `json:"schemas"`
		Responses  map[string]*docResponse  `json:"responses"`
	} `json:"components"`
}

// docOperation is an operation object.
type docOperation struct {
	OperationID string          `json:"operationId"`
	Security    *[]any          `json:"security"`
	Parameters  []*docParameter `json:"parameters"`
	RequestBody *struct {
		Content orderedMap[docMedia] `json:"content"`
	} `json:"requestBody"`
	Responses map[string]*docResponse `json:"responses"`
	// GraphQL is the GraphQL field of the same meaning (x-graphql).
	GraphQL string `json:"x-graphql"`
	// Refused are query parameters a looser description of the operation
	// has and the contract refuses (400), with the reason
	// (x-refused-parameters).
	Refused map[string]string `json:"x-refused-parameters"`
}

// docParameter is a parameter object, or a reference to one.
type docParameter struct {
	Ref         string     `json:"$ref"`
	Name        string     `json:"name"`
	In          string     `json:"in"`
	Description string     `json:"description"`
	Required    bool       `json:"required"`
	Schema      *docSchema `json:"schema"`
	// GraphQL is the argument the parameter fills, when it is not the
	// argument of the same name (x-graphql), such as where.configuratorID.
	GraphQL string `json:"x-graphql"`
}

// docMedia is a media type object of a request body.
type docMedia struct {
	Schema *docSchema `json:"schema"`
}

// docResponse is a response object, or a reference to one.
type docResponse struct {
	Ref     string              `json:"$ref"`
	Content map[string]struct{} `json:"content"`
}

// docSchema is the part of a schema object the contract reads.
type docSchema struct {
	Ref              string                 `json:"$ref"`
	Type             typeList               `json:"type"`
	Format           string                 `json:"format"`
	Enum             []any                  `json:"enum"`
	Minimum          *float64               `json:"minimum"`
	Properties       orderedMap[*docSchema] `json:"properties"`
	Required         []string               `json:"required"`
	Items            *docSchema             `json:"items"`
	ContentMediaType string                 `json:"contentMediaType"`
	// GraphQL is the argument a body's fields belong to (x-graphql), such
	// as input; without it the fields are arguments themselves.
	GraphQL string `json:"x-graphql"`
}

// typeList is a schema's type: one name or, in OpenAPI 3.1, several
// (["integer", "null"]).
type typeList []string

// UnmarshalJSON reads a type name or a list of them.
func (t *typeList) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
		return json.Unmarshal(b, (*[]string)(t))
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = typeList{s}
	return nil
}

// is reports whether the type is name, null aside.
func (t typeList) is(name string) bool {
	for _, n := range t {
		if n != "null" {
			return n == name
		}
	}
	return false
}

// orderedMap is a JSON object whose members keep the document's order:
// the order of a body's fields is the order its faults are reported in,
// and the order of its media types the order a 415 lists them in.
type orderedMap[V any] struct {
	keys   []string
	values map[string]V
}

// UnmarshalJSON reads the members in order.
func (m *orderedMap[V]) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("want an object")
	}
	m.values = map[string]V{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key := t.(string)
		var v V
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		m.keys = append(m.keys, key)
		m.values[key] = v
	}
	return nil
}

// readDocument decodes the OpenAPI document.
func readDocument(raw []byte) (*document, error) {
	var doc document
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// parameter resolves a parameter reference.
func (d *document) parameter(p *docParameter) (*docParameter, error) {
	if p.Ref == "" {
		return p, nil
	}
	name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
	if q := d.Components.Parameters[name]; ok && q != nil {
		return q, nil
	}
	return nil, fmt.Errorf("unresolved %s", p.Ref)
}

// schema resolves a schema reference.
func (d *document) schema(s *docSchema) (*docSchema, error) {
	if s == nil || s.Ref == "" {
		return s, nil
	}
	name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/")
	if t := d.Components.Schemas[name]; ok && t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("unresolved %s", s.Ref)
}

// envelope reports whether an operation answers its failures in the
// spec's {success, message, data} envelope: its 401 is documented as
// application/json rather than application/problem+json.
func (d *document) envelope(op *docOperation) (bool, error) {
	r := op.Responses["401"]
	if r == nil {
		return false, nil
	}
	if r.Ref != "" {
		name, _ := strings.CutPrefix(r.Ref, "#/components/responses/")
		if r = d.Components.Responses[name]; r == nil {
			return false, fmt.Errorf("unresolved %s", op.Responses["401"].Ref)
		}
	}
	_, plain := r.Content["application/json"]
	return plain, nil
}

// operation is one operation of the document: its route, whether it
// needs a token, how its failures are written, and its input.
type operation struct {
	id, method, path string
	// public operations need no token (security: []).
	public bool
	// fail writes a failure in the operation's format: problem+json, or
	// (envelope) the {success, message, data} envelope.
	fail     func(w http.ResponseWriter, r *http.Request, err error)
	envelope bool
	// graphQL is the GraphQL field of the same meaning; mutation tells
	// whether it is a mutation.
	graphQL  string
	mutation bool
	// params are the query and path parameters, path ones first, then in
	// the document's order; refused are the names the document refuses,
	// sorted, with the reason.
	params  []*docParameter
	refused []refusal
	// headers are the request headers the operation reads (header
	// parameters); headerReaders reads each.
	headers []string
	// bodies are the accepted media types of the request body, in the
	// document's order.
	bodies orderedMap[docMedia]
}

// operations reads every operation of the document.
func (d *document) operations() ([]*operation, error) {
	var ops []*operation
	for _, path := range slices.Sorted(mapKeysOf(d.Paths)) {
		item := d.Paths[path]
		var shared []*docParameter
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, fmt.Errorf("%s parameters: %w", path, err)
			}
		}
		for _, method := range slices.Sorted(mapKeysOf(item)) {
			if method == "parameters" {
				continue
			}
			var op docOperation
			if err := json.Unmarshal(item[method], &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			o, err := d.operation(strings.ToUpper(method), path, &op, shared)
			if err != nil {
				return nil, fmt.Errorf("%s %s (%s): %w", strings.ToUpper(method), path, op.OperationID, err)
			}
			ops = append(ops, o)
		}
	}
	return ops, nil
}

func (d *document) operation(method, path string, op *docOperation, shared []*docParameter) (*operation, error) {
	o := &operation{
		id: op.OperationID, method: method, path: path, fail: writeProblem,
		public: op.Security != nil && len(*op.Security) == 0, graphQL: op.GraphQL, mutation: method != "GET",
	}
	envelope, err := d.envelope(op)
	if err != nil {
		return nil, err
	}
	if envelope {
		o.fail, o.envelope = writeEnvelopeError, true
	}
	for _, p := range append(slices.Clone(shared), op.Parameters...) {
		if p, err = d.parameter(p); err != nil {
			return nil, err
		}
		if p.In == "header" {
			o.headers = append(o.headers, p.Name)
			continue
		}
		o.params = append(o.params, p)
	}
	slices.SortStableFunc(o.params, func(a, b *docParameter) int {
		return boolInt(a.In != "path") - boolInt(b.In != "path")
	})
	for _, name := range slices.Sorted(mapKeysOf(op.Refused)) {
		o.refused = append(o.refused, refusal{name, op.Refused[name]})
	}
	if op.RequestBody != nil {
		o.bodies = op.RequestBody.Content
		for _, mt := range o.bodies.keys {
			m := o.bodies.values[mt]
			if m.Schema, err = d.schema(m.Schema); err != nil {
				return nil, err
			}
			o.bodies.values[mt] = m
		}
	}
	return o, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mapKeysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestRoutesMatchDocument holds the route table and the input readers to
// openapi.json: every operation of the document is routed and every route
// is documented; an operation that needs a token answers 401 without one,
// in its failure format; each reader reads exactly the query parameters
// the document names (a parameter sent twice is refused by name, an
// undocumented one is not read); the refused parameters and the sort
// columns are the document's.
func TestRoutesMatchDocument(t *testing.T) {
	doc, err := readDocument(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := doc.operations()
	if err != nil {
		t.Fatal(err)
	}
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		f := newFixture(t, c)
		mux := chi.NewRouter()
		(&handler{res: graph.NewResolver(c), tokens: f.tokens}).routes(mux)
		routed := map[string]bool{}
		chi.Walk(mux, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
			routed[method+" "+route] = true
			return nil
		})
		for _, op := range ops {
			key := op.method + " " + op.path
			if !routed[key] {
				t.Errorf("%s (%s) is documented but not routed", key, op.id)
			}
			delete(routed, key)
			path := strings.NewReplacer("{id}", "1", "{key}", "abc").Replace(op.path)
			if !op.public {
				status, h, body := f.do(t, f.request(t, op.method, path, "", nil))
				wantType := "application/problem+json"
				if op.envelope {
					wantType = "application/json"
				}
				if status != http.StatusUnauthorized || h.Get("Content-Type") != wantType {
					t.Errorf("%s without a token: %d %s %s; want 401 %s", key, status, h.Get("Content-Type"), body, wantType)
				}
			}
			if op.method != http.MethodGet || op.public {
				continue
			}
			base := "?"
			for _, p := range op.params {
				if p.In == "query" && p.Required {
					base += p.Name + "=1&"
				}
			}
			for _, p := range op.params {
				if p.In != "query" {
					continue
				}
				status, _, body := f.get(t, f.owner1, path+"?"+p.Name+"=1&"+p.Name+"=2")
				if status != http.StatusBadRequest || !strings.Contains(string(body), p.Name+" is given 2 times") {
					t.Errorf("%s with %s twice: %d %s; want 400 naming %s", key, p.Name, status, body, p.Name)
				}
				if p.Name == "order_by" {
					var documented []string
					for _, e := range p.Schema.Enum {
						documented = append(documented, fmt.Sprint(e))
					}
					if list := sortLists[op.id]; list != strings.Join(documented, ", ") {
						t.Errorf("%s order_by reads %s; the document lists %v", key, list, documented)
					}
				}
			}
			if status, _, body := f.get(t, f.owner1, path+base+"undocumented=1&undocumented=2"); status == http.StatusBadRequest {
				t.Errorf("%s with an undocumented parameter twice: %d %s; want it ignored", key, status, body)
			}
			var refused []refusal
			if op.id == "listOrders" {
				refused = orderRefusals
			}
			if !slices.Equal(op.refused, refused) {
				t.Errorf("%s refuses %v; the document refuses %v", key, refused, op.refused)
			}
		}
		for key := range routed {
			t.Errorf("%s is routed but not documented", key)
		}
	})
}

// sortLists are the sort columns each list reads, by operation.
var sortLists = map[string]string{
	"listOrders": orderSorts.list, "listMaterials": materialSorts.list, "listMaterialCategories": categorySorts.list,
	"listTextures": textureSorts.list, "listFormFields": formFieldSorts.list, "listConfiguratorOptions": optionSorts.list,
}
