// Package fast renders GraphQL answers without gqlgen's per-field
// execution where it can do so exactly.
//
// gqlgen executes every field of every object through the same generic
// machinery (a field context, a middleware chain, a marshaler, several
// allocations), which is most of the cost of a list: a page of 50
// materials with 15 fields each is 750 such executions. Extension is a
// field interceptor: after a field's resolver has run (arguments coerced,
// tenancy applied, edges eager-loaded, all by gqlgen and the resolvers as
// usual), it writes the field's whole sub-selection as JSON in one pass,
// with writers generated from gqlgen's own bindings (writers_gen.go, made
// by the plugin in gen/), and hands gqlgen the bytes. Anything the writers
// do not cover the way gqlgen would (fields with arguments, abstract types,
// runtime directives, @defer), and any value gqlgen would answer with an
// error (a null in a non-null position, a failing edge load), makes the
// interceptor return the resolver's value untouched, so gqlgen executes
// that field as it always does. A test runs the same documents with and
// without the extension and requires byte-identical answers.
package fast

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/plugin/federation/fedruntime"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/graph/scalar"
	"github.com/configurator/catalogue/internal/bufpool"
)

// Extension is the gqlgen handler extension of the fast path.
type Extension struct {
	resolvers generated.ResolverRoot
}

// New returns the extension; resolvers are those of the executable schema,
// for the fields a resolver computes (such as an option's variations).
func New(resolvers generated.ResolverRoot) *Extension {
	return &Extension{resolvers: resolvers}
}

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
} = (*Extension)(nil)

// ExtensionName names the extension in gqlgen's errors.
func (*Extension) ExtensionName() string { return "FastPath" }

// Validate accepts every schema: the writers are generated from it.
func (*Extension) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptField resolves the field as usual and, when the field has a
// sub-selection the writers cover, answers its JSON instead of the value.
func (e *Extension) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	if err != nil || res == nil {
		return res, err
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || len(fc.Field.Selections) == 0 || fc.Field.Definition == nil || !graphql.HasOperationContext(ctx) {
		return res, err
	}
	if ctx.Value(writing{}) != nil {
		// A resolver a writer calls (resolve): its value is the writer's.
		return res, err
	}
	oc := graphql.GetOperationContext(ctx)
	if list, ok := res.([]fedruntime.Entity); ok {
		// A federation subgraph's _entities: each element by its type.
		w := &writer{oc: oc, resolvers: e.resolvers, buf: bufpool.Get()}
		if !w.entities(context.WithValue(ctx, writing{}, true), &fc.Field, list) {
			bufpool.Put(w.buf)
			return res, err
		}
		return finish(w.buf), nil
	}
	if !supported(oc, fc.Field.Definition.Type.Name(), fc.Field.Selections, 0) {
		return res, err
	}
	w := &writer{oc: oc, resolvers: e.resolvers, buf: bufpool.Get()}
	if !w.entry(context.WithValue(ctx, writing{}, true), fc.Object, &fc.Field, res) {
		bufpool.Put(w.buf)
		return res, err
	}
	return finish(w.buf), nil
}

// writing marks the context of the fields a writer writes, so that the
// extension stands aside for the resolvers it calls through the
// interceptors.
type writing struct{}

// resolve calls resolver r of a field of obj (ctx holds the field's
// context) the way gqlgen's executor does: through the operation's field
// interceptors, so that every interceptor (tracing's spans among them)
// sees each resolver whichever writer renders its field. An interceptor
// that answers a value of another type makes the writer decline, and
// gqlgen execute the field.
func resolve[O, T any](ctx context.Context, w *writer, obj O, r func(context.Context, O) (T, error)) (T, error) {
	var zero T
	if w.oc.ResolverMiddleware == nil {
		return r(ctx, obj)
	}
	res, err := w.oc.ResolverMiddleware(ctx, func(ctx context.Context) (any, error) { return r(ctx, obj) })
	if err != nil {
		return zero, err
	}
	if res == nil {
		return zero, nil
	}
	v, ok := res.(T)
	if !ok {
		return zero, errReplaced
	}
	return v, nil
}

// errReplaced is an interceptor's answer of another type than the
// resolver's.
var errReplaced = errors.New("an interceptor replaced the resolver's value")

// finish ends the lifetime of a pooled scratch buffer: the answer gets a
// copy of its own, which gqlgen may hold and marshal as long as it likes,
// and the scratch goes back to the pool at once.
func finish(scratch []byte) rendered {
	out := rendered(append(make([]byte, 0, len(scratch)), scratch...))
	bufpool.Put(scratch)
	return out
}

// maxDepth bounds the static check's recursion; deeper selections go to
// gqlgen (the document's own depth limit is lower).
const maxDepth = 64

// supported reports whether every field that sel can select on an object
// of type typ is one the writers cover, statically: @skip and @include are
// assumed to include everything, so a selection that passes is covered
// whatever the variables.
func supported(oc *graphql.OperationContext, typ string, sel ast.SelectionSet, depth int) bool {
	known, ok := fields[typ]
	if !ok || depth > maxDepth {
		return false
	}
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if !plainDirectives(s.Directives) {
				return false
			}
			if s.Name == "__typename" {
				continue
			}
			child, ok := known[s.Name]
			if !ok {
				return false
			}
			if child != "" && !supported(oc, child, s.SelectionSet, depth+1) {
				return false
			}
		case *ast.InlineFragment:
			if !plainDirectives(s.Directives) {
				return false
			}
			if applies(typ, s.TypeCondition) && !supported(oc, typ, s.SelectionSet, depth+1) {
				return false
			}
		case *ast.FragmentSpread:
			if !plainDirectives(s.Directives) || s.Definition == nil {
				return false
			}
			if applies(typ, s.Definition.TypeCondition) && !supported(oc, typ, s.Definition.SelectionSet, depth+1) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// plainDirectives reports whether ds holds only @skip and @include, which
// graphql.CollectFields applies.
func plainDirectives(ds ast.DirectiveList) bool {
	for _, d := range ds {
		if d.Name != "skip" && d.Name != "include" {
			return false
		}
	}
	return true
}

// applies reports whether a fragment on condition applies to typ, as
// graphql.CollectFields decides it.
func applies(typ, condition string) bool {
	return condition == "" || slices.Contains(implementors[typ], condition)
}

// writer accumulates the JSON of one intercepted field.
type writer struct {
	oc        *graphql.OperationContext
	resolvers generated.ResolverRoot
	buf       []byte
	// sets caches the collected fields of each selection set, which every
	// item of a list shares.
	sets map[*ast.Selection]*selection
}

// selection is a collected selection set and the JSON key of each field
// ("alias":), quoted once.
type selection struct {
	of     ast.SelectionSet // the set collected, for typ
	typ    string
	fields []graphql.CollectedField
	keys   [][]byte
}

// collect returns the fields of sel that apply to an object of type typ,
// as gqlgen's generated code collects them (fragments, @skip, @include).
func (w *writer) collect(sel ast.SelectionSet, typ string) *selection {
	id := setKey(sel)
	if s, ok := w.sets[id]; ok {
		return s
	}
	if s := shared.get(sel, typ); s != nil {
		return s
	}
	fs := graphql.CollectFields(w.oc, sel, implementors[typ])
	s := &selection{of: sel, typ: typ, fields: fs, keys: make([][]byte, len(fs))}
	for i := range fs {
		k := &writer{}
		graphql.MarshalString(fs[i].Alias).MarshalGQL(k)
		s.keys[i] = append(k.buf, ':')
	}
	if len(sel) > 0 && static(sel) {
		shared.put(s)
		return s
	}
	if w.sets == nil {
		w.sets = map[*ast.Selection]*selection{}
	}
	w.sets[id] = s
	return s
}

// shared holds the collected selections of static sets (see static)
// across requests. gqlgen keeps each parsed document (its query cache),
// and a set a writer is handed is a list of that document's nodes (the
// sub-selections of the fields of one alias, which gqlgen gathers into a
// new slice every time): the same nodes in the same order collect to the
// same fields in every request, so the collection (a third of the fast
// path's own cost on one object) is done once per document. A set with
// @skip or @include depends on the variables and is collected every time.
var shared = &sharedSets{m: map[sharedKey][]*selection{}}

// sharedSets is a set of collected selections found by their nodes.
type sharedSets struct {
	mu sync.RWMutex
	m  map[sharedKey][]*selection
	n  int
	// text is the length of the documents' texts the selections hold,
	// counted once per selection.
	text int
}

// maxShared and maxSharedText bound the selections of shared: when either
// is reached, it starts over. The documents gqlgen keeps (1,000) have
// fewer sets than that as a rule; documents written anew for every
// request (arguments inlined) fill it with sets never asked again, and
// starting over drops them and the documents they hold (a cached
// selection holds its nodes, and so their document, whose addresses are
// never reused while it is there). The bound on text keeps a caller who
// sends large documents (up to 64 KB each) from making it hold more than
// a few dozen of them beyond gqlgen's own cache.
const (
	maxShared     = 2048
	maxSharedText = 1 << 20
)

// sharedKey narrows a set down to the sets with its first node, length
// and type; get compares the rest.
type sharedKey struct {
	first ast.Selection
	n     int
	typ   string
}

// get returns the shared selection of sel for typ, or nil.
func (c *sharedSets) get(sel ast.SelectionSet, typ string) *selection {
	if len(sel) == 0 {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, s := range c.m[sharedKey{sel[0], len(sel), typ}] {
		if slices.Equal(s.of, sel) {
			return s
		}
	}
	return nil
}

// put adds s, which nothing changes from then on.
func (c *sharedSets) put(s *selection) {
	k := sharedKey{s.of[0], len(s.of), s.typ}
	text := 0
	if p := s.of[0].GetPosition(); p != nil && p.Src != nil {
		text = len(p.Src.Input)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= maxShared || c.text+text > maxSharedText {
		clear(c.m)
		c.n, c.text = 0, 0
	}
	for _, t := range c.m[k] {
		if slices.Equal(t.of, s.of) {
			return
		}
	}
	c.m[k] = append(c.m[k], s)
	c.n++
	c.text += text
}

// static reports whether collecting sel depends on nothing but the
// document: no selection graphql.CollectFields reads for it (the set's
// own, and those of the fragments it spreads or inlines) has a directive.
func static(sel ast.SelectionSet) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if len(s.Directives) > 0 {
				return false
			}
		case *ast.InlineFragment:
			if len(s.Directives) > 0 || !static(s.SelectionSet) {
				return false
			}
		case *ast.FragmentSpread:
			if len(s.Directives) > 0 || s.Definition == nil || len(s.Definition.Directives) > 0 || !static(s.Definition.SelectionSet) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// setKey names a selection set within a request by the address of its
// first selection: every item of a list is handed the same slice (its
// field's collected sub-selection), so one address is one set (nil for
// an empty set).
func setKey(sel ast.SelectionSet) *ast.Selection {
	if len(sel) == 0 {
		return nil
	}
	return &sel[0]
}

// fieldContext is ctx as a resolver or method of field f sees it under
// gqlgen (entgql's edge methods read the field's alias from it).
func (w *writer) fieldContext(ctx context.Context, f *graphql.CollectedField, object string, isMethod, isResolver bool) context.Context {
	return graphql.WithFieldContext(ctx, &graphql.FieldContext{
		Parent: graphql.GetFieldContext(ctx), Object: object, Field: *f, IsMethod: isMethod, IsResolver: isResolver,
	})
}

// Write appends p; marshalers write through it.
func (w *writer) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// WriteString appends s, for io.WriteString.
func (w *writer) WriteString(s string) (int, error) {
	w.buf = append(w.buf, s...)
	return len(s), nil
}

func (w *writer) byte(c byte)             { w.buf = append(w.buf, c) }
func (w *writer) raw(s string)            { w.buf = append(w.buf, s...) }
func (w *writer) null()                   { w.buf = append(w.buf, "null"...) }
func (w *writer) str(s string)            { graphql.MarshalString(s).MarshalGQL(w) }
func (w *writer) key(s *selection, i int) { w.buf = append(w.buf, s.keys[i]...) }

// leaf writes the marshaled scalar m; a null where the schema forbids one
// is gqlgen's to report.
func (w *writer) leaf(m graphql.Marshaler, nonNull bool) bool {
	if m == graphql.Null {
		if nonNull {
			return false
		}
		w.null()
		return true
	}
	m.MarshalGQL(w)
	return true
}

// rendered is the JSON of a field, handed to gqlgen as its answer. It
// owns its bytes (InterceptField copies them out of its pooled scratch
// buffer), so it may be marshaled any number of times, by anyone who
// holds it, and the garbage collector frees it with the response.
type rendered []byte

// MarshalGQL writes the JSON into the response.
func (r rendered) MarshalGQL(w io.Writer) {
	w.Write(r)
}

// The appending twins of gqlgen's scalar marshalers (the generator's
// leaves): each writes exactly what its marshaler writes, and returns
// false where the marshaler would answer null in a non-null position or
// fail. leaf_test.go holds them to the marshalers.

// string is graphql.MarshalString: gqlgen's quoting, which escapes only
// control characters, the quote and the backslash.
func (w *writer) string(s string, _ bool) bool {
	b := append(w.buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '\t':
			b = append(b, `\t`...)
		case '\r':
			b = append(b, `\r`...)
		case '\n':
			b = append(b, `\n`...)
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		default:
			b = append(b, `\u00`...)
			b = append(b, hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	w.buf = append(b, '"')
	return true
}

const hex = "0123456789ABCDEF"

// bool is graphql.MarshalBoolean.
func (w *writer) bool(v bool, _ bool) bool {
	w.buf = strconv.AppendBool(w.buf, v)
	return true
}

// int is graphql.MarshalInt.
func (w *writer) int(v int, _ bool) bool {
	w.buf = strconv.AppendInt(w.buf, int64(v), 10)
	return true
}

// id is scalar.MarshalID (graphql.MarshalIntID): the digits, quoted.
func (w *writer) id(v int, _ bool) bool {
	w.buf = append(w.buf, '"')
	w.buf = strconv.AppendInt(w.buf, int64(v), 10)
	w.buf = append(w.buf, '"')
	return true
}

// time is graphql.MarshalTime: RFC 3339 with nanoseconds, quoted; the
// zero time is null.
func (w *writer) time(t time.Time, nonNull bool) bool {
	if t.IsZero() {
		return w.leaf(graphql.Null, nonNull)
	}
	w.buf = append(w.buf, '"')
	w.buf = t.AppendFormat(w.buf, time.RFC3339Nano)
	w.buf = append(w.buf, '"')
	return true
}

// float is graphql.MarshalFloatContext (fmt's %g, which is strconv's
// shortest 'g' form); infinities and NaN fail.
func (w *writer) float(f float64, _ bool) bool {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	w.buf = strconv.AppendFloat(w.buf, f, 'g', -1, 64)
	return true
}

// object is scalar.MarshalObject.
func (w *writer) object(v json.RawMessage, _ bool) bool {
	w.buf = scalar.AppendObject(w.buf, v)
	return true
}
