package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/go-chi/chi/v5"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/scalar"
	"github.com/configurator/catalogue/internal/apperr"
	"github.com/configurator/catalogue/internal/valid"
)

// A binder reads the input of one operation (its parameters and body, as
// the document describes them) into A, the arguments of the operation's
// GraphQL field in Go: a page input such as model.OrdersPageArgs, or a
// struct of the field's arguments ({ID int; Input ent.UpdateMaterialInput}).
// It is built once, when New builds the interface, and refuses a
// document that disagrees with the GraphQL schema; per request it only
// runs the readers it was built from.
type binder[A any] struct {
	op     *operation
	params []paramReader
	// query tells whether the operation reads the query string.
	query bool
	// bodies reads the body by media type; nil when there is no body.
	bodies map[string]bodyReader
}

// paramReader reads one query or path parameter into its place in A.
type paramReader struct {
	name     string
	path     bool // a path parameter ({id})
	required bool
	read     valueReader
	field    func(v reflect.Value) reflect.Value
}

// valueReader reads the text of one value into f, the field of A it
// fills; the error is about name.
type valueReader func(name, s string, f reflect.Value) error

// setter puts a value into its place in A (v is A, addressable).
type setter func(v, x reflect.Value)

// bodyReader reads a request body into A. done releases what it holds
// (the temporary files of a multipart body); nulls are the fields the
// client set to null (domain names), which the resolver gives their
// meaning (valid.Nulls).
type bodyReader func(w http.ResponseWriter, r *http.Request, v reflect.Value) (nulls []string, done func(), err error)

// newBinder builds the binder of op over A from the document and the
// GraphQL schema.
func newBinder[A any](op *operation, schema *ast.Schema) (*binder[A], error) {
	b := &binder[A]{op: op}
	t := reflect.TypeFor[A]()
	args, err := fieldArguments(op, schema)
	if err != nil {
		return nil, err
	}
	for _, p := range op.params {
		place, err := locate(t, schema, args, p.graphQLPath())
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		read, err := paramValue(p, place, schema)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		b.params = append(b.params, paramReader{name: p.Name, path: p.In == "path", required: p.Required, read: read, field: place.field})
		b.query = b.query || p.In == "query"
	}
	for _, mt := range op.bodies.keys {
		if b.bodies == nil {
			b.bodies = map[string]bodyReader{}
		}
		s := op.bodies.values[mt].Schema
		var read bodyReader
		switch mt {
		case "application/json":
			read, err = jsonBody(t, schema, args, s)
		case "multipart/form-data", "application/x-www-form-urlencoded":
			read, err = formBody(t, schema, args, s, slices.Contains(op.bodies.keys, "application/x-www-form-urlencoded"))
		default:
			err = fmt.Errorf("media type %s is not read", mt)
		}
		if err != nil {
			return nil, fmt.Errorf("body %s: %w", mt, err)
		}
		b.bodies[mt] = read
	}
	return b, nil
}

// read reads the input of r. It returns r with the nulls of the body in
// its context (valid.WithNulls) and a function releasing the body.
func (b *binder[A]) read(w http.ResponseWriter, r *http.Request) (A, *http.Request, func(), error) {
	var in A
	v := reflect.ValueOf(&in).Elem()
	done := func() {}
	if err := b.readParams(r, v); err != nil {
		return in, r, done, err
	}
	if b.bodies == nil {
		return in, r, done, nil
	}
	read := b.bodies[mediaType(r)]
	if read == nil {
		return in, r, done, unsupported(r, b.op.bodies.keys...)
	}
	nulls, done, err := read(w, r, v)
	if done == nil {
		done = func() {}
	}
	if len(nulls) > 0 {
		r = r.WithContext(valid.WithNulls(r.Context(), nulls))
	}
	return in, r, done, err
}

// readParams reads the query string and path parameters strictly and
// collects every fault, so that a client learns of all of them at once.
// Parameters the document does not name are ignored, a named one given
// twice is a fault, and the ones it refuses by name are refused with the
// reason it gives. Values only ever become typed arguments, never text
// passed on.
func (b *binder[A]) readParams(r *http.Request, v reflect.Value) error {
	if len(b.params) == 0 && len(b.op.refused) == 0 {
		return nil
	}
	// given[i] is the value of params[i] and how many times it came;
	// refused[j] tells whether refused[j] came.
	var givenBuf [16]queryValue
	var refusedBuf [8]bool
	given, refused := givenBuf[:0], refusedBuf[:0]
	if len(b.params) > len(givenBuf) || len(b.op.refused) > len(refusedBuf) {
		given, refused = nil, nil
	}
	given, refused = append(given, make([]queryValue, len(b.params))...), append(refused, make([]bool, len(b.op.refused))...)
	if b.query || len(b.op.refused) > 0 {
		if err := b.scanQuery(r.URL.RawQuery, given, refused); err != nil {
			return err
		}
	}
	var errs apperr.List
	for j, p := range b.op.refused {
		if refused[j] {
			errs = append(errs, apperr.Field(p.name, "%s", p.reason))
		}
	}
	for i, p := range b.params {
		s := given[i].s
		switch {
		case p.path:
			s = chi.URLParam(r, p.name)
		case given[i].n == 0 && p.required:
			errs = append(errs, apperr.Field(p.name, "{} is required"))
			continue
		case given[i].n == 0:
			continue
		case given[i].n > 1:
			errs = append(errs, apperr.Field(p.name, "{} is given %d times; give it once", given[i].n))
			continue
		}
		if err := p.read(p.name, s, p.field(v)); err != nil {
			errs = append(errs, apperr.Errors(err)...)
		}
	}
	return errs.Err()
}

// queryValue is the first value of a query parameter and how many times
// the parameter came.
type queryValue struct {
	s string
	n int
}

// scanQuery reads the query string as url.ParseQuery does (pairs split
// at &, names and values unescaped, the whole string refused for one bad
// escape or a semicolon), keeping only the parameters the operation
// reads or refuses; it makes no map, as this runs on every request.
func (b *binder[A]) scanQuery(raw string, given []queryValue, refused []bool) error {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if strings.Contains(pair, ";") {
			return apperr.E(apperr.Invalid, "the query string is malformed: invalid semicolon separator in query")
		}
		if pair == "" {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(key)
		if err == nil {
			value, err = url.QueryUnescape(value)
		}
		if err != nil {
			return apperr.E(apperr.Invalid, "the query string is malformed: %s", valid.Clip(err.Error()))
		}
		for i, p := range b.params {
			if !p.path && p.name == key {
				if given[i].n == 0 {
					given[i].s = value
				}
				given[i].n++
			}
		}
		for j, p := range b.op.refused {
			refused[j] = refused[j] || p.name == key
		}
	}
	return nil
}

// graphQLPath is the argument a parameter fills: its x-graphql, or the
// argument of the same name in GraphQL's spelling.
func (p *docParameter) graphQLPath() string {
	if p.GraphQL != "" {
		return p.GraphQL
	}
	return graph.FieldName(p.Name)
}

// fieldArguments returns the arguments of the operation's GraphQL field
// (a Query field for GET, a Mutation field otherwise).
func fieldArguments(op *operation, schema *ast.Schema) (ast.ArgumentDefinitionList, error) {
	if op.graphQL == "" {
		return nil, nil
	}
	root := schema.Query
	if op.mutation {
		root = schema.Mutation
	}
	f := root.Fields.ForName(op.graphQL)
	if f == nil {
		return nil, fmt.Errorf("x-graphql %s is not a field of %s", op.graphQL, root.Name)
	}
	return f.Arguments, nil
}

// place is where a value goes: its GraphQL type and the Go field of A.
type place struct {
	gql    *ast.Type
	goType reflect.Type // the field's type
	// field returns the field in A (v), making the structs on the way.
	field func(v reflect.Value) reflect.Value
	set   setter
}

// locate finds the place of the dotted GraphQL path (where.configuratorID)
// among args, and the Go field of t it maps to, by name as gqlgen binds
// them (case aside).
func locate(t reflect.Type, schema *ast.Schema, args ast.ArgumentDefinitionList, path string) (place, error) {
	names := strings.Split(path, ".")
	arg := args.ForName(names[0])
	if arg == nil {
		return place{}, fmt.Errorf("the GraphQL field has no argument %s", names[0])
	}
	typ := arg.Type
	var index [][]int
	goType := t
	for i, name := range names {
		if i > 0 {
			def := schema.Types[typ.Name()]
			if def == nil || def.Kind != ast.InputObject || def.Fields.ForName(name) == nil {
				return place{}, fmt.Errorf("%s has no input field %s", typ.Name(), name)
			}
			typ = def.Fields.ForName(name).Type
		}
		for goType.Kind() == reflect.Pointer {
			goType = goType.Elem()
		}
		f, ok := goField(goType, name)
		if !ok {
			return place{}, fmt.Errorf("%s has no field for %s", goType, name)
		}
		index = append(index, f.Index)
		goType = f.Type
	}
	field := fieldAt(index)
	return place{gql: typ, goType: goType, field: field, set: func(v, x reflect.Value) { assign(field(v), x) }}, nil
}

// goField finds the field of struct t that gqlgen binds the GraphQL name
// to.
func goField(t reflect.Type, name string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	return t.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, name) })
}

// fieldAt returns the field at index (a field of a field...), making the
// structs on the way when their pointers are nil.
func fieldAt(index [][]int) func(v reflect.Value) reflect.Value {
	return func(v reflect.Value) reflect.Value {
		for _, idx := range index[:len(index)-1] {
			f := v.FieldByIndex(idx)
			if f.Kind() == reflect.Pointer {
				if f.IsNil() {
					f.Set(reflect.New(f.Type().Elem()))
				}
				f = f.Elem()
			}
			v = f
		}
		return v.FieldByIndex(index[len(index)-1])
	}
}

// assign sets f to x, or to a pointer to x, or to what x points at.
func assign(f, x reflect.Value) {
	switch {
	case x.Type() == f.Type():
		f.Set(x)
	case f.Kind() == reflect.Pointer && f.Type().Elem() == x.Type():
		p := reflect.New(x.Type())
		p.Elem().Set(x)
		f.Set(p)
	case x.Kind() == reflect.Pointer && x.Type().Elem() == f.Type():
		if !x.IsNil() {
			f.Set(x.Elem())
		}
	default:
		panic(fmt.Sprintf("rest: cannot set %s to %s", f.Type(), x.Type()))
	}
}

// assignable reports whether assign can set a field of type f to values
// of type x.
func assignable(f, x reflect.Type) bool {
	return x == f || f.Kind() == reflect.Pointer && f.Elem() == x || x.Kind() == reflect.Pointer && x.Elem() == f
}

// paramValue returns the reader of a parameter's text for the GraphQL type
// of its place, by the rules of the GraphQL scalar of that type, after
// checking that the document declares the same type.
func paramValue(p *docParameter, pl place, schema *ast.Schema) (valueReader, error) {
	s := p.Schema
	if s == nil {
		return nil, fmt.Errorf("no schema")
	}
	name := pl.gql.Name()
	var read valueReader
	var produces reflect.Type
	switch def := schema.Types[name]; {
	case name == "ID":
		if !isID(s) {
			return nil, fmt.Errorf("the argument is an ID; document an integer of format int64, minimum 1")
		}
		read, produces = readID, reflect.TypeFor[int]()
	case name == "Int":
		if !s.Type.is("integer") || s.Format != "int32" {
			return nil, fmt.Errorf("the argument is an Int; document an integer of format int32")
		}
		read, produces = readInt, reflect.TypeFor[int]()
	case name == "Date":
		if !s.Type.is("string") || s.Format != "date" {
			return nil, fmt.Errorf("the argument is a Date; document a string of format date")
		}
		read, produces = readDate, reflect.TypeFor[scalar.Date]()
	case name == "String":
		if !s.Type.is("string") {
			return nil, fmt.Errorf("the argument is a String; document a string")
		}
		read, produces = readString, reflect.TypeFor[string]()
	case def != nil && def.Kind == ast.Enum:
		return enumValue(s, def, pl.goType)
	default:
		return nil, fmt.Errorf("arguments of type %s are not read from parameters", name)
	}
	if pl.goType != produces && pl.goType != reflect.PointerTo(produces) {
		return nil, fmt.Errorf("its Go field is %s, not %s", pl.goType, produces)
	}
	return read, nil
}

// isID reports whether the document declares s as GraphQL's ID is read:
// an integer of 64 bits, 1 or more (valid.ID).
func isID(s *docSchema) bool {
	return s.Type.is("integer") && s.Format == "int64" && s.Minimum != nil && *s.Minimum == 1
}

// The readers of parameters set the field directly (a value, or a new
// pointer to it), without boxing the value in an interface: they run for
// every parameter of every request.

func readID(name, s string, f reflect.Value) error {
	n, err := valid.ID(name, s)
	if err == nil {
		setValue(f, n)
	}
	return err
}

func readInt(name, s string, f reflect.Value) error {
	n, err := valid.Int(name, s, 32)
	if err == nil {
		setValue(f, n)
	}
	return err
}

func readDate(name, s string, f reflect.Value) error {
	t, err := valid.Date(name, s)
	if err == nil {
		setValue(f, scalar.Date{Time: t})
	}
	return err
}

func readString(_, s string, f reflect.Value) error {
	setValue(f, s)
	return nil
}

// setValue sets f, of type T or *T, to x.
func setValue[T any](f reflect.Value, x T) {
	if f.Kind() == reflect.Pointer {
		f.Set(reflect.ValueOf(pointerTo(x)))
		return
	}
	*f.Addr().Interface().(*T) = x
}

// pointerTo returns a new pointer to a copy of x (only this copy goes to
// the heap, not every x setValue sees).
func pointerTo[T any](x T) *T {
	p := new(T)
	*p = x
	return p
}

// enumValue reads a value of a GraphQL enum, written in lower case on
// REST (order_by=created_at is CREATED_AT); the document must list
// exactly the enum's values. A sort direction (order) is read in any case,
// as entgql reads it.
func enumValue(s *docSchema, def *ast.Definition, goType reflect.Type) (valueReader, error) {
	var documented, graphQL []string
	for _, e := range s.Enum {
		documented = append(documented, fmt.Sprint(e))
	}
	for _, e := range def.EnumValues {
		graphQL = append(graphQL, strings.ToLower(e.Name))
	}
	slices.Sort(documented)
	slices.Sort(graphQL)
	if !s.Type.is("string") || !slices.Equal(documented, graphQL) {
		return nil, fmt.Errorf("document a string enum of %s's values in lower case, %v; it lists %v", def.Name, graphQL, documented)
	}
	elem := goType
	if elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	values := map[string]reflect.Value{}
	for _, name := range documented {
		p := reflect.New(elem)
		u, ok := p.Interface().(graphql.Unmarshaler)
		if !ok {
			return nil, fmt.Errorf("%s does not read GraphQL enum values", elem)
		}
		if err := u.UnmarshalGQL(strings.ToUpper(name)); err != nil {
			return nil, fmt.Errorf("%s does not read %s: %v", elem, strings.ToUpper(name), err)
		}
		values[name] = p.Elem()
	}
	set := func(f, v reflect.Value) {
		if f.Kind() == reflect.Pointer {
			p := reflect.New(elem)
			p.Elem().Set(v)
			v = p
		}
		f.Set(v)
	}
	if elem == reflect.TypeFor[entgql.OrderDirection]() {
		return func(name, s string, f reflect.Value) error {
			v, ok := values[strings.ToLower(s)]
			if !ok {
				return apperr.Field(name, "{} must be %s, got %q", strings.Join(documented, " or "), valid.Clip(s))
			}
			set(f, v)
			return nil
		}, nil
	}
	list := strings.Join(documented, ", ")
	return func(name, s string, f reflect.Value) error {
		v, ok := values[s]
		if !ok {
			return apperr.Field(name, "{} must be one of %s, got %q", list, valid.Clip(s))
		}
		set(f, v)
		return nil
	}, nil
}

// bodyField is a field of a request body and its place in A.
type bodyField struct {
	name     string
	required bool
	// id marks an ID (1 or more, checked as GraphQL's ID scalar does).
	id  bool
	pl  place
	doc *docSchema
	gql string // the GraphQL type name
}

// bodyFields reads the fields of a body schema, in the document's order,
// and finds their places: fields of the argument the schema's x-graphql
// names, or arguments themselves.
func bodyFields(t reflect.Type, schema *ast.Schema, args ast.ArgumentDefinitionList, s *docSchema) ([]bodyField, error) {
	if s == nil || !s.Type.is("object") {
		return nil, fmt.Errorf("the body schema must be an object")
	}
	var fields []bodyField
	for _, name := range s.Properties.keys {
		path := graph.FieldName(name)
		if s.GraphQL != "" {
			path = s.GraphQL + "." + path
		}
		pl, err := locate(t, schema, args, path)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		fields = append(fields, bodyField{
			name: name, required: slices.Contains(s.Required, name), pl: pl, doc: s.Properties.values[name],
			gql: pl.gql.Name(), id: pl.gql.Name() == "ID",
		})
	}
	return fields, nil
}

// jsonBody returns the reader of a JSON object body: application/json
// only, within valid.MaxJSONBody, no unknown fields, no trailing data, the
// JSON type of each field as the document declares it; faults name the
// field. Absent and null are the same to a required field; any other null
// is passed on to the resolver (valid.WithNulls), which clears what can be
// cleared and refuses the rest, as it does for GraphQL.
func jsonBody(t reflect.Type, schema *ast.Schema, args ast.ArgumentDefinitionList, s *docSchema) (bodyReader, error) {
	fields, err := bodyFields(t, schema, args, s)
	if err != nil {
		return nil, err
	}
	// The body is decoded into a struct made from the document, so that
	// encoding/json refuses unknown fields and wrong JSON types by name.
	var sfs []reflect.StructField
	for i, f := range fields {
		var gt reflect.Type
		switch {
		case f.doc.Type.is("string") && f.gql == "String":
			gt = reflect.TypeFor[*string]()
		case f.doc.Type.is("number") && f.gql == "Float":
			gt = reflect.TypeFor[*float64]()
		case f.doc.Type.is("boolean") && f.gql == "Boolean":
			gt = reflect.TypeFor[*bool]()
		case f.id && isID(f.doc):
			gt = reflect.TypeFor[*int]()
		default:
			return nil, fmt.Errorf("field %s: a %s argument documented as %v is not read from JSON", f.name, f.gql, f.doc.Type)
		}
		if !assignable(f.pl.goType, gt.Elem()) && !assignable(f.pl.goType, gt) {
			return nil, fmt.Errorf("field %s: its Go field is %s, not %s", f.name, f.pl.goType, gt)
		}
		sfs = append(sfs, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: gt, Tag: reflect.StructTag(`json:"` + f.name + `"`)})
	}
	body := reflect.StructOf(sfs)
	return func(w http.ResponseWriter, r *http.Request, v reflect.Value) ([]string, func(), error) {
		b := reflect.New(body)
		members, err := decodeJSON(w, r, b.Interface())
		if err != nil {
			return nil, nil, err
		}
		var errs apperr.List
		var nulls []string
		for i, f := range fields {
			x := b.Elem().Field(i)
			if x.IsNil() {
				if f.required {
					errs = append(errs, apperr.Field(f.name, "{} is required"))
				} else if raw, ok := members[f.name]; ok && string(raw) == "null" {
					nulls = append(nulls, f.name)
				}
				continue
			}
			if f.id {
				if err := valid.Positive(f.name, int(x.Elem().Int())); err != nil {
					errs = append(errs, apperr.Errors(err)...)
					continue
				}
			}
			f.pl.set(v, x)
		}
		return nulls, nil, errs.Err()
	}, nil
}

// formBody returns the reader of a multipart/form-data body (and, with
// urlencoded, an application/x-www-form-urlencoded one), each field read
// as the GraphQL type of its place: text, a decimal number, an id, a JSON
// object in a text field, a file, or a list of files (form.go).
func formBody(t reflect.Type, schema *ast.Schema, args ast.ArgumentDefinitionList, s *docSchema, urlencoded bool) (bodyReader, error) {
	fields, err := bodyFields(t, schema, args, s)
	if err != nil {
		return nil, err
	}
	type reader func(f *form, field bodyField) (reflect.Value, bool)
	var readers []reader
	for _, f := range fields {
		var read reader
		var produces reflect.Type
		d := f.doc
		switch {
		case f.gql == "String" && d.Type.is("string") && d.Format == "":
			read, produces = func(fm *form, f bodyField) (reflect.Value, bool) {
				var v string
				var ok bool
				if f.required {
					v, ok = fm.required(f.name)
				} else {
					v, ok = fm.text(f.name)
				}
				return reflect.ValueOf(v), ok
			}, reflect.TypeFor[string]()
		case f.gql == "Float" && d.Type.is("number") && f.required:
			read, produces = func(fm *form, f bodyField) (reflect.Value, bool) {
				return reflect.ValueOf(fm.float(f.name)), true
			}, reflect.TypeFor[float64]()
		case f.id && isID(d):
			read, produces = func(fm *form, f bodyField) (reflect.Value, bool) {
				n := fm.id(f.name, f.required)
				return reflect.ValueOf(n), n != nil
			}, reflect.TypeFor[*int]()
		case f.gql == "Map" && d.Type.is("string") && d.ContentMediaType == "application/json" && f.required:
			read, produces = func(fm *form, f bodyField) (reflect.Value, bool) {
				return reflect.ValueOf(fm.object(f.name)), true
			}, reflect.TypeFor[json.RawMessage]()
		case f.gql == "Upload" && d.Type.is("string") && d.Format == "binary":
			read, produces = func(fm *form, f bodyField) (reflect.Value, bool) {
				u := fm.file(f.name)
				if u == nil && f.required && len(fm.files[f.name]) == 0 && len(fm.values[f.name]) == 0 {
					fm.fail(f.name, "{} is required")
				}
				return reflect.ValueOf(u), u != nil
			}, reflect.TypeFor[*graphql.Upload]()
		case f.pl.gql.Elem != nil && f.pl.gql.Elem.Name() == "Upload" && d.Type.is("array") && d.Items != nil && d.Items.Format == "binary":
			read, produces = func(fm *form, f bodyField) (reflect.Value, bool) {
				return reflect.ValueOf(fm.fileArray(f.name)), true
			}, reflect.TypeFor[[]*graphql.Upload]()
		default:
			return nil, fmt.Errorf("field %s: a %s argument documented as %v is not read from a form", f.name, f.pl.gql, d.Type)
		}
		if !assignable(f.pl.goType, produces) {
			return nil, fmt.Errorf("field %s: its Go field is %s, not %s", f.name, f.pl.goType, produces)
		}
		readers = append(readers, read)
	}
	return func(w http.ResponseWriter, r *http.Request, v reflect.Value) ([]string, func(), error) {
		fm, err := parseForm(w, r, urlencoded)
		if err != nil {
			return nil, nil, err
		}
		for i, f := range fields {
			if x, ok := readers[i](fm, f); ok {
				f.pl.set(v, x)
			}
		}
		return nil, func() { fm.close(r) }, fm.err()
	}, nil
}

// handlerOf builds the handler of an operation; New calls it once per
// operation of the document.
type handlerOf func(op *operation, schema *ast.Schema) (http.HandlerFunc, error)

// bound is the handler of an operation whose input, read by the
// contract, is A: fn runs only when the input is sound, and otherwise the
// operation's failure is written.
func bound[A any](fn func(w http.ResponseWriter, r *http.Request, in A)) handlerOf {
	return func(op *operation, schema *ast.Schema) (http.HandlerFunc, error) {
		b, err := newBinder[A](op, schema)
		if err != nil {
			return nil, err
		}
		return func(w http.ResponseWriter, r *http.Request) {
			in, r2, done, err := b.read(w, r)
			defer done()
			if err != nil {
				op.fail(w, r, err)
				return
			}
			fn(w, r2, in)
		}, nil
	}
}

// byID is the handler of .../{id}: the resolver of the same meaning loads
// (or deletes) the record, NotFound for an unknown id or another owner's,
// and present shapes the answer.
func byID[T, J any](load func(context.Context, int) (T, error), present func(T) J) handlerOf {
	return bound(func(w http.ResponseWriter, r *http.Request, in struct{ ID int }) {
		v, err := load(r.Context(), in.ID)
		if err != nil {
			writeProblem(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, present(v))
	})
}
