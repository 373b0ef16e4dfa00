package cost

import (
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Rows are the row counts the complexity of a list assumes: what the
// resolvers return when a list is not given a size, and the most that
// perPage -1 may return.
type Rows struct {
	// First is a Relay connection without first or last.
	First int
	// PerPage is a page query without perPage.
	PerPage int
	// AllPages is perPage -1: its row ceiling.
	AllPages int
	// MaxFirst and MaxPerPage are the largest sizes the resolvers accept;
	// a size beyond them costs nothing here, since the resolver refuses
	// it with an error naming the argument.
	MaxFirst, MaxPerPage int
	// List is a list field that takes no size (an option's variations, a
	// configurator's forms): an estimate of the rows such edges hold.
	List int
}

// Weights price the fields of one schema. A field costs 1 plus what its
// selection costs, and a field that returns rows multiplies its
// selection's cost by the rows it returns: first or last on a Relay
// connection, perPage on a page query (-1 costs Rows.AllPages), Rows.List
// on a list of objects that takes no size. So the complexity of an
// operation is about the number of values its answer holds, known before
// it runs.
type Weights struct {
	rows   Rows
	fields map[*ast.FieldDefinition]weight
}

type weight uint8

const (
	plain weight = iota
	// sized fields take first/last or perPage.
	sized
	// list fields return a list of objects without a size argument.
	list
	// represented fields (a federation subgraph's _entities) return one
	// object per item of their representations argument.
	represented
)

// representations is the argument of _entities whose items each return
// an object: a gateway's batch of entity references, priced like the
// rows of a list.
const representations = "representations"

// sizeArgs are the arguments that say how many rows a field returns.
var sizeArgs = []string{"first", "last", "perPage"}

// NewWeights prices the fields of s. A field is sized when it takes one of
// first, last or perPage; the list fields of the types such fields return
// (a connection's edges, a page's data) are priced there, so only the
// other lists of objects get Rows.List. A field that takes
// representations (_entities) returns as many objects as it is given.
// Introspection is priced as plain
// fields: its lists are the schema's own, not data.
func NewWeights(s *ast.Schema, rows Rows) *Weights {
	w := &Weights{rows: rows, fields: map[*ast.FieldDefinition]weight{}}
	wrappers := map[string]bool{}
	for _, def := range s.Types {
		for _, f := range def.Fields {
			switch {
			case slices.ContainsFunc(sizeArgs, func(a string) bool { return f.Arguments.ForName(a) != nil }):
				w.fields[f] = sized
				wrappers[f.Type.Name()] = true
			case f.Arguments.ForName(representations) != nil && f.Type.Elem != nil:
				w.fields[f] = represented
			}
		}
	}
	for name, def := range s.Types {
		if wrappers[name] || strings.HasPrefix(name, "__") {
			continue
		}
		for _, f := range def.Fields {
			if w.fields[f] != plain || f.Type.Elem == nil || strings.HasPrefix(f.Name, "__") {
				continue
			}
			if el := s.Types[f.Type.Name()]; el != nil && (el.Kind == ast.Object || el.Kind == ast.Interface || el.Kind == ast.Union) {
				w.fields[f] = list
			}
		}
	}
	return w
}

// limit caps complexities, so that no product overflows.
const limit = math.MaxInt32

// Complexity is the cost of op with the variables vars, as Weights
// describes it. op must have passed validation (its fields know their
// definitions) and Check (so its fragments do not cycle and its expanded
// size is bounded).
func (w *Weights) Complexity(op *ast.OperationDefinition, vars map[string]any) int {
	return w.set(op.SelectionSet, vars)
}

func (w *Weights) set(sel ast.SelectionSet, vars map[string]any) int {
	total := 0
	for _, s := range sel {
		var c int
		switch s := s.(type) {
		case *ast.Field:
			c = w.field(s, vars)
		case *ast.InlineFragment:
			c = w.set(s.SelectionSet, vars)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				c = w.set(s.Definition.SelectionSet, vars)
			}
		}
		total = min(limit, total+c)
	}
	return total
}

func (w *Weights) field(f *ast.Field, vars map[string]any) int {
	if len(f.SelectionSet) == 0 {
		return 1 // a leaf: only objects are sized or listed
	}
	child := w.set(f.SelectionSet, vars)
	rows := 1
	switch w.fields[f.Definition] {
	case sized:
		rows = w.size(f, vars)
	case list:
		rows = w.rows.List
	case represented:
		rows = items(f.Arguments.ForName(representations), vars)
	}
	return min(limit, 1+min(limit, child*rows))
}

// size is the rows a sized field returns: the larger of first and last,
// perPage, or the defaults when they are absent. A value out of range
// costs 0 rows: the resolver refuses it (with a clearer error than a cost
// limit would give).
func (w *Weights) size(f *ast.Field, vars map[string]any) int {
	relay, page := 0, 0
	var hasRelay, hasPage bool
	for _, a := range f.Arguments {
		n, ok := intValue(a.Value, vars)
		switch {
		case !ok:
		case a.Name == "first" || a.Name == "last":
			relay, hasRelay = max(relay, n), true
		case a.Name == "perPage":
			page, hasPage = n, true
		}
	}
	switch {
	case f.Definition.Arguments.ForName("perPage") != nil:
		switch {
		case !hasPage:
			return w.rows.PerPage
		case page == -1:
			return w.rows.AllPages
		case page < 0 || page > w.rows.MaxPerPage:
			return 0
		}
		return page
	case !hasRelay:
		return w.rows.First
	case relay > w.rows.MaxFirst:
		return 0
	}
	return relay
}

// intValue reads an Int argument, a literal or a variable; ok is false
// when it is absent or null. Values beyond 32 bits are clamped: GraphQL
// Ints are 32-bit, and the resolver refuses them anyway.
func intValue(v *ast.Value, vars map[string]any) (int, bool) {
	if v == nil {
		return 0, false
	}
	x, err := v.Value(vars)
	if err != nil {
		return 0, false
	}
	var n int64
	switch x := x.(type) {
	case int64:
		n = x
	case int:
		n = int64(x)
	case int32:
		n = int64(x)
	case float64:
		n = int64(max(-limit, min(limit, x)))
	case json.Number:
		if n, err = x.Int64(); err != nil {
			return 0, true
		}
	default:
		return 0, false
	}
	return int(max(-limit, min(limit, n))), true
}

// items is the length of a list argument, a literal or a variable; 0 when
// it is absent or not a list (validation refuses it).
func items(a *ast.Argument, vars map[string]any) int {
	if a == nil || a.Value == nil {
		return 0
	}
	x, err := a.Value.Value(vars)
	if err != nil {
		return 0
	}
	l, _ := x.([]any)
	return min(len(l), limit)
}
