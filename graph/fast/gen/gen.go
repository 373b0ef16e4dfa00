// Package gen is the gqlgen plugin that writes graph/fast/writers_gen.go:
// for every object type of the schema, a function that renders a value of
// its Go type as the JSON of a GraphQL selection. It reads the bindings
// gqlgen itself computed (which Go field, method or resolver backs each
// GraphQL field, and which marshaler renders each scalar), so the fast
// path and gqlgen's executor cannot disagree on where a value comes from
// or how it is spelled. Whatever it cannot render the way gqlgen would
// (fields with arguments, abstract types, runtime directives, batch
// resolvers) it leaves out, and the fast path hands such selections back
// to gqlgen.
package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"go/types"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
)

// Plugin writes the fast-path writers to Filename, in package Package.
type Plugin struct {
	Filename string
	Package  string
}

// Name names the plugin in gqlgen's errors.
func (p *Plugin) Name() string { return "fastpath" }

// GenerateCode writes the writers of every object type of d.
func (p *Plugin) GenerateCode(d *codegen.Data) error {
	g := &generator{imports: map[string]string{}, names: map[string]string{}}
	g.use("github.com/99designs/gqlgen/graphql", "graphql")
	src, err := g.file(p.Package, d)
	if err != nil {
		return fmt.Errorf("fastpath: %w", err)
	}
	out, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("fastpath: format: %w\n%s", err, src)
	}
	return os.WriteFile(p.Filename, out, 0o644)
}

type generator struct {
	body    bytes.Buffer
	imports map[string]string // path -> name
	names   map[string]string // name -> path
	tmp     int
}

// fast tells whether the fast path renders field f.
func fast(f *codegen.Field) bool {
	if len(f.Args) > 0 || f.Batch || f.Stream || f.VOkFunc || f.HasHaser || f.IsMap() {
		return false
	}
	for _, d := range f.Directives {
		if !d.SkipRuntime {
			return false
		}
	}
	return renderable(f.TypeReference)
}

// renderable tells whether values of t can be written without gqlgen.
func renderable(t *config.TypeReference) bool {
	switch {
	case t.IsPtrToSlice() || t.IsPtrToIntf() || t.IsPtrToPtr():
		return false
	case t.IsSlice():
		return renderable(t.Elem())
	case t.Definition.IsAbstractType() || t.IsRoot:
		return false
	case t.Definition.IsLeafType():
		return t.IsMarshaler || (t.Marshaler != nil && !t.HasEnumValues() && t.CastType == nil)
	}
	return true
}

// objects are the types the fast path writes: every object but the roots
// and the introspection types, which gqlgen serves itself.
func objects(d *codegen.Data) []*codegen.Object {
	var out []*codegen.Object
	for _, o := range d.Objects {
		if o.Root || o.Stream || strings.HasPrefix(o.Name, "__") {
			continue
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (g *generator) file(pkg string, d *codegen.Data) ([]byte, error) {
	objs := objects(d)
	written := map[string]bool{}
	for _, o := range objs {
		written[o.Name] = true
	}
	g.p("// fields lists, per object type, the fields the fast path writes and")
	g.p("// the object type of each (\"\" for a leaf), for the static check of a")
	g.p("// selection; implementors are the type conditions each object satisfies.")
	g.p("var fields = map[string]map[string]string{")
	for _, o := range objs {
		g.p("%q: {", o.Name)
		for _, f := range o.Fields {
			if !fast(f) || (!f.TypeReference.Definition.IsLeafType() && !written[f.TypeReference.Definition.Name]) {
				continue
			}
			child := ""
			if !f.TypeReference.Definition.IsLeafType() {
				child = f.TypeReference.Definition.Name
			}
			g.p("%q: %q,", f.Name, child)
		}
		g.p("},")
	}
	g.p("}")
	g.p("")
	g.p("var implementors = map[string][]string{")
	for _, o := range objs {
		names := []string{strconv.Quote(o.Name)}
		for _, i := range o.Implements {
			names = append(names, strconv.Quote(i.Name))
		}
		g.p("%q: {%s},", o.Name, strings.Join(names, ", "))
	}
	g.p("}")
	g.p("")

	// The entry points: the value of one field, as its resolver returned it.
	g.p("// entry writes res, the value of field of object, with the selection of f.")
	g.p("func (w *writer) entry(ctx context.Context, object string, f *graphql.CollectedField, res any) bool {")
	g.p("switch object {")
	var entryObjs []*codegen.Object
	for _, o := range d.Objects {
		if o.Name == "Query" || (!o.Root && !o.Stream && !strings.HasPrefix(o.Name, "__")) {
			entryObjs = append(entryObjs, o)
		}
	}
	sort.Slice(entryObjs, func(i, j int) bool { return entryObjs[i].Name < entryObjs[j].Name })
	for _, o := range entryObjs {
		var cases []*codegen.Field
		for _, f := range o.Fields {
			t := f.TypeReference
			if t.Definition.IsLeafType() || !written[t.Definition.Name] || !renderable(t) {
				continue
			}
			cases = append(cases, f)
		}
		if len(cases) == 0 {
			continue
		}
		g.p("case %q:", o.Name)
		g.p("switch f.Name {")
		for _, f := range cases {
			g.p("case %q:", f.Name)
			g.p("v, ok := res.(%s)", g.ref(f.TypeReference.GO))
			g.p("if !ok { return false }")
			if err := g.value(f.TypeReference, "v", o.Name); err != nil {
				return nil, fmt.Errorf("%s.%s: %w", o.Name, f.Name, err)
			}
			g.p("return true")
		}
		g.p("}")
	}
	g.p("}")
	g.p("return false")
	g.p("}")
	g.p("")

	for _, o := range objs {
		if err := g.object(o, written); err != nil {
			return nil, err
		}
	}

	var head bytes.Buffer
	fmt.Fprintf(&head, "// Code generated by graph/fast/gen (a gqlgen plugin), DO NOT EDIT.\n\npackage %s\n\nimport (\n", pkg)
	var paths []string
	for p := range g.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	fmt.Fprintf(&head, "\"context\"\n\n")
	for _, p := range paths {
		if g.imports[p] == path.Base(p) {
			fmt.Fprintf(&head, "%q\n", p)
		} else {
			fmt.Fprintf(&head, "%s %q\n", g.imports[p], p)
		}
	}
	fmt.Fprintf(&head, ")\n\n")
	head.Write(g.body.Bytes())
	return head.Bytes(), nil
}

// object writes the writer of object type o.
func (g *generator) object(o *codegen.Object, written map[string]bool) error {
	g.p("func (w *writer) obj%s(ctx context.Context, f *graphql.CollectedField, obj %s) bool {", o.Name, g.ref(o.Reference()))
	g.p("set := w.collect(f.Selections, %q)", o.Name)
	g.p("w.byte('{')")
	g.p("for i := range set.fields {")
	g.p("f := &set.fields[i]")
	g.p("if i > 0 { w.byte(',') }")
	g.p("w.key(set, i)")
	g.p("switch f.Name {")
	g.p("case \"__typename\":")
	g.p("w.str(%q)", o.Name)
	for _, f := range o.Fields {
		if !fast(f) || (!f.TypeReference.Definition.IsLeafType() && !written[f.TypeReference.Definition.Name]) {
			continue
		}
		g.p("case %q:", f.Name)
		if err := g.get(o, f); err != nil {
			return fmt.Errorf("%s.%s: %w", o.Name, f.Name, err)
		}
		if err := g.value(f.TypeReference, "v", o.Name); err != nil {
			return fmt.Errorf("%s.%s: %w", o.Name, f.Name, err)
		}
	}
	g.p("default:")
	g.p("return false")
	g.p("}")
	g.p("}")
	g.p("w.byte('}')")
	g.p("return true")
	g.p("}")
	g.p("")
	return nil
}

// get reads the value of field f of obj into v, the way gqlgen's
// generated resolver of the field does (field.gotpl).
func (g *generator) get(o *codegen.Object, f *codegen.Field) error {
	isMethod := f.IsResolver || f.IsMethod()
	fctx := fmt.Sprintf("w.fieldContext(ctx, f, %q, %v, %v)", o.Name, isMethod, f.IsResolver)
	switch {
	case f.IsResolver:
		// Through the operation's field interceptors (tracing), as
		// gqlgen's executor calls a resolver (resolve).
		g.p("v, err := resolve(%s, w, obj, w.resolvers.%s().%s)", fctx, o.Name, f.GoFieldName)
		g.p("if err != nil { return false }")
	case f.IsMethod():
		arg := ""
		if f.MethodHasContext {
			arg = fctx
		}
		if f.NoErr {
			g.p("v := %s.%s(%s)", f.GoReceiverName, f.GoFieldName, arg)
		} else {
			g.p("v, err := %s.%s(%s)", f.GoReceiverName, f.GoFieldName, arg)
			g.p("if err != nil { return false }")
		}
	case f.IsVariable():
		g.p("v := %s.%s", f.GoReceiverName, f.GoFieldName)
	default:
		return fmt.Errorf("unsupported binding")
	}
	return nil
}

// leaves are the scalar marshalers the writer has an appending twin of
// (fast.go), which writes the same bytes without an allocation; a test
// holds each twin to its marshaler.
var leaves = map[string]string{
	"github.com/99designs/gqlgen/graphql.MarshalString":            "string",
	"github.com/99designs/gqlgen/graphql.MarshalBoolean":           "bool",
	"github.com/99designs/gqlgen/graphql.MarshalInt":               "int",
	"github.com/99designs/gqlgen/graphql.MarshalTime":              "time",
	"github.com/99designs/gqlgen/graphql.MarshalFloatContext":      "float",
	"github.com/configurator/catalogue/graph/scalar.MarshalID":     "id",
	"github.com/configurator/catalogue/graph/scalar.MarshalObject": "object",
	// graph/scalar's built-in scalars read input their own way and write
	// it through gqlgen's marshalers.
	"github.com/configurator/catalogue/graph/scalar.MarshalString":       "string",
	"github.com/configurator/catalogue/graph/scalar.MarshalInt":          "int",
	"github.com/configurator/catalogue/graph/scalar.MarshalFloatContext": "float",
}

// value writes v, of type t, as gqlgen's marshal function of t does
// (type.gotpl), or returns false from the writer where gqlgen would report
// an error (a null in a non-null position, a float it cannot write).
func (g *generator) value(t *config.TypeReference, v, object string) error {
	nonNull := t.GQL.NonNull
	switch {
	case t.IsSlice():
		g.p("if %s == nil {", v)
		if nonNull {
			g.p("w.raw(\"[]\")")
		} else {
			g.p("w.null()")
		}
		g.p("} else {")
		e := g.name("e")
		g.p("w.byte('[')")
		g.p("for i, %s := range %s {", e, v)
		g.p("if i > 0 { w.byte(',') }")
		if err := g.value(t.Elem(), e, object); err != nil {
			return err
		}
		g.p("}")
		g.p("w.byte(']')")
		g.p("}")
		return nil
	case t.IsPtrToSlice() || t.IsPtrToIntf() || t.IsPtrToPtr():
		return fmt.Errorf("unsupported type %s", t.GO)
	}
	if t.IsNilable() {
		g.p("if %s == nil {", v)
		if nonNull {
			g.p("return false")
		} else {
			g.p("w.null()")
		}
		g.p("} else {")
		defer g.p("}")
	}
	switch {
	case t.Definition.IsLeafType() && t.IsMarshaler:
		if t.IsContext {
			g.p("if err := %s.MarshalGQLContext(ctx, w); err != nil { return false }", v)
		} else {
			g.p("%s.MarshalGQL(w)", v)
		}
	case t.Definition.IsLeafType() && t.Marshaler != nil:
		if t.HasEnumValues() || t.CastType != nil {
			return fmt.Errorf("unsupported scalar %s", t.GO)
		}
		arg := v
		if t.IsTargetNilable() && !t.IsNilable() {
			arg = "&" + v
		} else if !t.IsTargetNilable() && t.IsNilable() {
			arg = "*" + v
		}
		if m, ok := leaves[t.Marshaler.FullName()]; ok {
			g.p("if !w.%s(%s, %v) { return false }", m, arg, nonNull)
			break
		}
		call := g.call(t.Marshaler) + "(" + arg + ")"
		if t.IsContext {
			g.p("if err := %s.MarshalGQLContext(ctx, w); err != nil { return false }", call)
		} else {
			g.p("if !w.leaf(%s, %v) { return false }", call, nonNull)
		}
	case t.Definition.IsLeafType():
		return fmt.Errorf("unsupported scalar %s", t.GO)
	default:
		arg := v
		if !t.IsNilable() {
			arg = "&" + v
		}
		g.p("if !w.obj%s(ctx, f, %s) { return false }", t.Definition.Name, arg)
	}
	return nil
}

func (g *generator) name(prefix string) string {
	g.tmp++
	return fmt.Sprintf("%s%d", prefix, g.tmp)
}

// ref spells type t in the generated file, importing its packages.
func (g *generator) ref(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string { return g.use(p.Path(), p.Name()) })
}

// call spells function fn in the generated file.
func (g *generator) call(fn *types.Func) string {
	return g.use(fn.Pkg().Path(), fn.Pkg().Name()) + "." + fn.Name()
}

// use imports the package at path (named name) and returns the name the
// generated file calls it by.
func (g *generator) use(p, name string) string {
	if n, ok := g.imports[p]; ok {
		return n
	}
	n := name
	for i := 2; g.names[n] != ""; i++ {
		n = fmt.Sprintf("%s%d", name, i)
	}
	g.imports[p], g.names[n] = n, p
	return n
}

func (g *generator) p(format string, args ...any) {
	fmt.Fprintf(&g.body, format+"\n", args...)
}
