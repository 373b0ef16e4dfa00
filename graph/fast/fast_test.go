package fast_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/fast"
	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/demo"
	"github.com/configurator/catalogue/internal/viewer"
)

// pair is the same executable schema served twice: by gqlgen alone, and
// with the fast path.
type pair struct {
	plain, fast http.Handler
	ext         *fast.Extension
	// rec sees the fields of both, as tracing does: registered first.
	rec    *recorder
	schema *ast.Schema
	viewer *viewer.Viewer
}

func newPair(t *testing.T, c *ent.Client) *pair {
	t.Helper()
	sum, err := demo.Seed(dbtest.Sys, c)
	if err != nil {
		t.Fatal(err)
	}
	res := graph.NewResolver(c)
	rec := &recorder{}
	serve := func(ext *fast.Extension) http.Handler {
		es := generated.NewExecutableSchema(generated.Config{Resolvers: res})
		srv := handler.New(es)
		srv.AddTransport(transport.POST{})
		// As the service keeps them: a document asked again is the same
		// nodes, which the fast path's shared selections are found by.
		srv.SetQueryCache(lru.New[*ast.QueryDocument](100))
		srv.Use(rec)
		srv.Use(extension.Introspection{})
		if ext != nil {
			srv.Use(ext)
		}
		// _entities and _service, as the service answers them: inside
		// the fast path, as the service registers it.
		srv.Use(graph.NewFederation(res))
		return srv
	}
	p := &pair{ext: fast.New(res), rec: rec, viewer: &viewer.Viewer{OwnerID: sum.Owners[0].ID, Kind: viewer.KindOpenAPI, ConfiguratorID: sum.Owners[0].Configurators[0]}}
	p.plain, p.fast = serve(nil), serve(p.ext)
	p.schema = generated.NewExecutableSchema(generated.Config{Resolvers: res}).Schema()
	return p
}

// ask runs query with vars on h as the pair's viewer.
func (p *pair) ask(t *testing.T, h http.Handler, query string, vars map[string]any) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	r := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r = r.WithContext(viewer.NewContext(r.Context(), p.viewer))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Body.Bytes()
}

// same requires the fast path to answer query byte for byte as gqlgen
// does, and reports whether it wrote any field itself and whether the
// answer has errors. gqlgen resolves list items concurrently, so the
// order of errors varies from run to run: answers with errors are
// compared with their errors sorted.
func (p *pair) same(t *testing.T, query string, vars map[string]any) (wrote, failed bool) {
	t.Helper()
	want := p.ask(t, p.plain, query, vars)
	before := p.rec.written.Load()
	got := p.ask(t, p.fast, query, vars)
	after := p.rec.written.Load()
	failed = bytes.Contains(want, []byte(`"errors"`))
	if failed {
		got, want = sortErrors(t, got), sortErrors(t, want)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("answers differ for\n%s\nvariables %v\nfast:   %s\ngqlgen: %s", query, vars, got, want)
	}
	return after > before, failed
}

// sortErrors returns answer with its errors in a fixed order.
func sortErrors(t *testing.T, answer []byte) []byte {
	t.Helper()
	var a struct {
		Errors []json.RawMessage `json:"errors"`
		Data   json.RawMessage   `json:"data"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, answer)
	}
	slices.SortFunc(a.Errors, func(x, y json.RawMessage) int { return bytes.Compare(x, y) })
	out, _ := json.Marshal(a)
	return out
}

// The documents the benchmark sends (../shared/bench/workloads/gql), on
// the demo data, and the shapes around them: aliases, __typename, named
// and inline fragments, @skip and @include both ways, a field selected
// twice, nested edges, nulls, and fields the fast path leaves to gqlgen.
var documents = []struct {
	name    string
	query   string
	vars    map[string]any
	written bool // the fast path writes at least one field
}{
	{"W1", `query W1($c: ID!) { materialsPage(where: {categoryID: $c}, perPage: 50, page: 1, orderBy: CREATED_AT, order: DESC) { data { id name materialFile categoryID textureID status materialType surface bump color opacity specular reflection createdAt updatedAt createdBy } } }`, map[string]any{"c": "1"}, true},
	{"W2", `query W2($id: ID!) { material(id: $id) { id name materialFile categoryID textureID status materialType surface bump color opacity specular reflection createdAt updatedAt createdBy } }`, map[string]any{"id": "3"}, true},
	{"W3", `query W3($c: ID!, $from: Date!, $to: Date!) { ordersPage(where: {configuratorID: $c}, startDate: $from, endDate: $to, perPage: 20, page: 1, orderBy: CREATED_AT, order: DESC) { pagination { total } data { id price status customerDetails configuratorSummary configuratorSnapshot configuratorPrintMap invoiceURL orderStorefront createdAt updatedAt configurator { id name } } } }`, map[string]any{"c": "1", "from": "2026-03-01T00:00:00Z", "to": "2026-03-31T00:00:00Z"}, true},
	{"W4", `query W4($p: Int!) { ordersPage(perPage: 20, page: $p, orderBy: CREATED_AT, order: DESC) { data { id price status createdAt configurator { id name } } } }`, map[string]any{"p": 1}, true},
	{"W5", `query W5($id: ID!) { configuratorOption(id: $id) { id configuratorID title type settings position createdAt updatedAt createdBy variations { id name position selected modelID materialID materialCategoryID textValue customColor textFontSize textFontFamily textColorCategoryID numericalDefault createdAt updatedAt } } }`, map[string]any{"id": "6"}, true},
	{"aliases and typename", `{ a: material(id: 1) { __typename x: id y: name id } b: material(id: 2) { name n2: name } }`, nil, true},
	{"fragments", `query { materialsPage(perPage: 5) { data { ...M ... on Node { id } ... on Material { color } } pagination { ...P } } } fragment M on Material { name opacity } fragment P on Pagination { total lastPage perPage currentPage }`, nil, true},
	{"skip and include", `query($yes: Boolean!, $no: Boolean!) { materialsPage(perPage: 3) { data { id name @include(if: $yes) color @include(if: $no) opacity @skip(if: $yes) ... @skip(if: $no) { surface } } } }`, map[string]any{"yes": true, "no": false}, true},
	// The same document again (the same parsed nodes), the other way.
	{"skip and include reversed", `query($yes: Boolean!, $no: Boolean!) { materialsPage(perPage: 3) { data { id name @include(if: $yes) color @include(if: $no) opacity @skip(if: $yes) ... @skip(if: $no) { surface } } } }`, map[string]any{"yes": false, "no": true}, true},
	{"fragment with a directive", `query($yes: Boolean!) { material(id: 2) { id ...F } } fragment F on Material { name color @include(if: $yes) }`, map[string]any{"yes": true}, true},
	{"fragment with a directive reversed", `query($yes: Boolean!) { material(id: 2) { id ...F } } fragment F on Material { name color @include(if: $yes) }`, map[string]any{"yes": false}, true},
	{"nested edges", `{ ordersPage(perPage: -1) { data { id configurator { id name options { id title variations { id name selected } } } } } }`, nil, true},
	{"option with aliased variations", `{ configuratorOption(id: 6) { id v1: variations { id } v2: variations { name position } } }`, nil, true},
	{"option sets", `{ optionSetList { id name options { id title type } } }`, nil, true},
	{"every list", `{ materialCategoryList { id title } configuratorFormList { id enableForm fields { id title } } formFieldsPage(perPage: -1) { data { id title } } texturesPage(perPage: -1) { data { id name } } configuratorOptionsPage(perPage: 4, page: 2) { data { id variations { id } } pagination { total } } optionVariationList(configuratorOptionID: 1) { id name } }`, nil, true},
	{"viewer", `{ viewer { ownerID tokenKind configurator { id name } } }`, nil, true},
	{"connection with arguments", `{ configurators { totalCount edges { cursor node { id name orders(first: 2) { totalCount edges { node { id price } } } } } pageInfo { hasNextPage endCursor } } }`, nil, true},
	// _entities as a gateway sends it: several types in one request,
	// fragments, __typename, edges (nulls are errors, which TestSameAnswers
	// leaves out; graph's TestEntities* cover them).
	{"entities", `query($r: [_Any!]!) { _entities(representations: $r) { __typename ... on Order { id price configurator { id name } } ... on Material { id name category { title } } ... on Configurator { ...C } } } fragment C on Configurator { id name }`,
		map[string]any{"r": []any{map[string]any{"__typename": "Order", "id": "2"}, map[string]any{"__typename": "Material", "id": "1"}, map[string]any{"__typename": "Configurator", "id": "1"}, map[string]any{"__typename": "Order", "id": "1"}}}, true},
	{"introspection", `{ __schema { queryType { name } } __type(name: "Material") { name fields { name } } }`, nil, false},
}

// recorder is a field interceptor that counts the resolvers it sees
// (the fields tracing spans), by Object.field, and the fields the fast
// path wrote.
type recorder struct {
	mu      sync.Mutex
	seen    map[string]int
	written atomic.Int64
	// wrote holds the fields the fast path wrote, Object.field.
	wrote sync.Map
}

func (*recorder) ExtensionName() string                   { return "Recorder" }
func (*recorder) Validate(graphql.ExecutableSchema) error { return nil }

func (r *recorder) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.IsResolver {
		r.mu.Lock()
		if r.seen == nil {
			r.seen = map[string]int{}
		}
		r.seen[fc.Object+"."+fc.Field.Name]++
		r.mu.Unlock()
	}
	res, err := next(ctx)
	if fast.Written(res) {
		r.written.Add(1)
		if fc := graphql.GetFieldContext(ctx); fc != nil {
			r.wrote.Store(fc.Object+"."+fc.Field.Name, true)
		}
	}
	return res, err
}

// take returns what the recorder saw since the last take.
func (r *recorder) take() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.seen
	r.seen = map[string]int{}
	return seen
}

// TestInterceptorsSeeEveryResolver: a field interceptor registered before
// the fast path (tracing is one) sees every resolver the operation runs,
// as often as gqlgen alone runs it, whichever writer renders the field:
// the writers call the resolvers of the fields they write (an option's
// variations, an option set's options, the viewer's configurator)
// through the operation's interceptors.
func TestInterceptorsSeeEveryResolver(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		p := newPair(t, c)
		nested := map[string]bool{}
		for _, d := range documents {
			p.rec.take()
			p.ask(t, p.plain, d.query, d.vars)
			want := p.rec.take()
			p.ask(t, p.fast, d.query, d.vars)
			got := p.rec.take()
			if !maps.Equal(got, want) {
				t.Errorf("%s: the interceptor saw %v under the fast path; gqlgen alone %v", d.name, got, want)
			}
			for f := range got {
				nested[f] = true
			}
		}
		// The documents do reach resolvers below a field the fast path
		// writes, so the test compares something.
		for _, f := range []string{"ConfiguratorOption.variations", "OptionSet.options", "Viewer.configurator", "Viewer.tokenKind"} {
			if !nested[f] {
				t.Errorf("no document runs the resolver %s", f)
			}
		}
	})
}

func TestSameAnswers(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		p := newPair(t, c)
		for _, d := range documents {
			t.Run(d.name, func(t *testing.T) {
				wrote, failed := p.same(t, d.query, d.vars)
				if failed {
					t.Fatalf("the document fails, so it tests little:\n%s", d.query)
				}
				if wrote != d.written {
					t.Errorf("fast path wrote a field: %v; want %v", wrote, d.written)
				}
			})
		}
	})
}

// TestEntitiesWritten: the fast path writes a federation gateway's
// _entities whole, each entity with its type's writer, rather than leaving
// the union's elements to gqlgen (TestSameAnswers compares the answers).
func TestEntitiesWritten(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		p := newPair(t, c)
		for _, d := range documents {
			if d.name == "entities" {
				p.ask(t, p.fast, d.query, d.vars)
			}
		}
		if _, ok := p.rec.wrote.Load("Query._entities"); !ok {
			t.Errorf("the fast path did not write Query._entities")
		}
	})
}

// TestSharedSelections: a document asked again reuses the selections
// collected the first time, unless collecting them depends on the
// variables; TestSameAnswers checks the answers of both kinds.
func TestSharedSelections(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		p := newPair(t, c)
		// Texts of this test alone, so that no other test shared them.
		plain := `query($id: ID!) { shared: material(id: $id) { id name color } }`
		dynamic := `query($id: ID!, $y: Boolean!) { shared: material(id: $id) { id name color @include(if: $y) } }`
		n0 := fast.SharedLen()
		p.same(t, plain, map[string]any{"id": "2"})
		n1 := fast.SharedLen()
		if n1 != n0+1 {
			t.Fatalf("a document of one set added %d shared selections; want 1", n1-n0)
		}
		p.same(t, plain, map[string]any{"id": "3"})
		if n := fast.SharedLen(); n != n1 {
			t.Errorf("the same document asked again added %d shared selections; want none", n-n1)
		}
		for _, y := range []bool{true, false, true} {
			p.same(t, dynamic, map[string]any{"id": "2", "y": y})
		}
		if n := fast.SharedLen(); n != n1 {
			t.Errorf("a set with @include was shared (%d more)", n-n1)
		}
		// Large documents, each new (a comment pads it to 60 KB, under
		// the 64 KB limit): the texts shared selections hold stay within
		// their bound however many arrive.
		pad := "#" + strings.Repeat("x", 60<<10) + "\n"
		for i := range 40 {
			p.same(t, fmt.Sprintf("%squery($id: ID!) { big%d: material(id: $id) { id name } }", pad, i), map[string]any{"id": "2"})
			if text := fast.SharedText(); text > fast.MaxSharedText {
				t.Fatalf("after %d large documents the shared selections hold %d bytes of text; the bound is %d", i+1, text, fast.MaxSharedText)
			}
		}
	})
}

// TestSameAnswersRandom asks random selections over the whole schema,
// reached from the root fields that need no argument or a demo id, with
// random aliases, repeats, fragments and directives.
func TestSameAnswersRandom(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		p := newPair(t, c)
		roots := []string{
			"materialsPage(perPage: -1)", "material(id: 2)", "ordersPage(perPage: 7, page: 2)", "order(id: 4)",
			"texturesPage", "texture(id: 1)", "configuratorOptionsPage(perPage: -1)", "configuratorOption(id: 7)",
			"formFieldsPage", "configuratorFormList", "optionSetList", "materialCategoryList",
			"optionVariationList(configuratorOptionID: 6)", "viewer", "configurators", "orders(first: 3)",
		}
		rng := rand.New(rand.NewPCG(1, 2))
		wrote, failed := 0, 0
		for range 120 {
			var b strings.Builder
			var frags []string
			b.WriteString("{")
			for j := range 1 + rng.IntN(2) {
				root := roots[rng.IntN(len(roots))]
				name := root[:strings.IndexAny(root+"(", "(")]
				def := p.schema.Query.Fields.ForName(name)
				fmt.Fprintf(&b, " r%d: %s ", j, root)
				p.selection(&b, rng, def.Type.Name(), 0, &frags)
			}
			b.WriteString("}")
			for _, f := range frags {
				b.WriteString(f)
			}
			w, f := p.same(t, b.String(), nil)
			if w {
				wrote++
			}
			if f {
				failed++
			}
		}
		t.Logf("120 random documents: the fast path wrote fields in %d, %d answered errors (on both paths)", wrote, failed)
		if wrote < 60 || failed > 30 {
			t.Errorf("the fast path wrote fields in %d of 120 random documents and %d failed; the test is too weak", wrote, failed)
		}
	})
}

// selection writes a random selection set on type typ.
func (p *pair) selection(b *strings.Builder, rng *rand.Rand, typ string, depth int, frags *[]string) {
	def := p.schema.Types[typ]
	var fields []*ast.FieldDefinition
	for _, f := range def.Fields {
		if strings.HasPrefix(f.Name, "__") || hasRequiredArgs(f) {
			continue
		}
		if leaf := p.schema.Types[f.Type.Name()].IsLeafType(); !leaf && depth >= 3 {
			continue
		}
		fields = append(fields, f)
	}
	b.WriteString("{ ")
	n := 1 + rng.IntN(len(fields))
	picked := rng.Perm(len(fields))[:n]
	slices.Sort(picked)
	for k, i := range picked {
		f := fields[i]
		switch r := rng.IntN(10); {
		case r == 0:
			b.WriteString("__typename ")
		case r == 1 && len(*frags) < 3:
			at := len(*frags)
			name := fmt.Sprintf("F%d", at)
			*frags = append(*frags, "")
			var fb strings.Builder
			fmt.Fprintf(&fb, " fragment %s on %s ", name, typ)
			p.selection(&fb, rng, typ, depth+1, frags)
			(*frags)[at] = fb.String()
			fmt.Fprintf(b, "...%s ", name)
		case r == 2:
			fmt.Fprintf(b, "... on %s @include(if: true) { %s ", typ, f.Name)
			p.sub(b, rng, f, depth, frags)
			b.WriteString("} ")
		}
		if rng.IntN(4) == 0 {
			fmt.Fprintf(b, "a%d_%d: ", depth, k)
		}
		b.WriteString(f.Name)
		if rng.IntN(12) == 0 {
			b.WriteString(" @skip(if: true)")
		}
		b.WriteString(" ")
		p.sub(b, rng, f, depth, frags)
	}
	b.WriteString("} ")
}

// sub writes the selection of f, if it has one.
func (p *pair) sub(b *strings.Builder, rng *rand.Rand, f *ast.FieldDefinition, depth int, frags *[]string) {
	if !p.schema.Types[f.Type.Name()].IsLeafType() {
		p.selection(b, rng, f.Type.Name(), depth+1, frags)
	}
}

func hasRequiredArgs(f *ast.FieldDefinition) bool {
	for _, a := range f.Arguments {
		if a.Type.NonNull && a.DefaultValue == nil {
			return true
		}
	}
	return false
}
