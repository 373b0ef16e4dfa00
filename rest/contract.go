package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The served OpenAPI document (openapi.json) is the one description of
// the request side of REST v1. New reads it once and builds the interface
// from it: every route and method, which operations need a token, the
// format of each operation's failures, and the readers of each
// operation's parameters and bodies (bind.go). A handler only names the
// operation it serves (operationId) and the resolver it calls; what a
// request may carry is the document's, so the document and the behaviour
// cannot drift. The answer shapes are rest/present.go's, checked against
// the document by openapi_test.go.
//
// Each parameter and body field fills the argument or input field of the
// GraphQL field the operation names in x-graphql (ordersPage,
// createMaterial); it is the field of the same name in GraphQL's
// spelling (per_page fills perPage, category_id fills categoryID) unless
// the parameter's x-graphql names it (configurator_id fills
// where.configuratorID), and a body schema's x-graphql names the
// argument its fields belong to (input). The GraphQL type of that
// argument decides how a value is read, by the rules GraphQL's scalars
// apply (internal/valid), and the document must declare the same type
// (bind.go checks it when New builds the interface).

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

// operation is one operation of the document, ready to serve: its route,
// whether it needs a token, how its failures are written, and the
// readers of its input (bind.go).
type operation struct {
	id, method, path string
	// public operations need no token (security: []).
	public bool
	// fail writes a failure in the operation's format: problem+json, or
	// the {success, message, data} envelope.
	fail func(w http.ResponseWriter, r *http.Request, err error)
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
		o.fail = writeEnvelopeError
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

// refusal is a query parameter the contract refuses, and why.
type refusal struct{ name, reason string }

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
