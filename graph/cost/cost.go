// Package cost bounds what one GraphQL document may ask for before the
// server spends anything on it. Check walks a parsed document once, with
// every fragment spread expanded in place but each fragment's figures
// computed only once (memoised), so a document of fragments that each
// spread the next ten times costs a walk over its text, not over the
// billions of selections it expands to; it then refuses documents over
// the limits of expanded selections, depth and aliases. It runs before
// gqlparser's validation, whose overlapping-fields rule is quadratic in
// the expanded selections.
package cost

import (
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
)

// Limits are the bounds a document must keep.
type Limits struct {
	// Selections bounds the fields and fragment spreads of the chosen
	// operation, with fragments expanded.
	Selections int
	// Depth bounds the nesting of selection sets, fragments expanded.
	Depth int
	// Aliases bounds the aliased fields, fragments expanded.
	Aliases int
}

// Exceeded is the refusal of a document over a limit; its message is
// safe to show a client.
type Exceeded struct {
	// Limit names the bound: "selections", "depth", "aliases" or
	// "fragments" (a fragment that spreads itself).
	Limit string
	// Got is the figure found; counts stop at Max+1.
	Got int
	Max int
}

func (e *Exceeded) Error() string {
	switch e.Limit {
	case "fragments":
		return "the document's fragments spread each other in a cycle"
	case "depth":
		return fmt.Sprintf("the query nests %d levels deep; the limit is %d", e.Got, e.Max)
	case "aliases":
		return fmt.Sprintf("the query has more than %d aliased fields (fragments expanded)", e.Max)
	}
	return fmt.Sprintf("the query selects more than %d fields (fragments expanded); ask for less, or in several requests", e.Max)
}

// figures are what one selection set adds up to, fragments expanded.
type figures struct {
	selections, depth, aliases int
}

// Check measures every operation and every fragment of doc and returns
// an *Exceeded error when one is over a limit. All of them, not only the
// operation a request names: gqlparser validates the whole document, so
// an unused operation or fragment would cost as much. Figures saturate
// just past the limits, so no count overflows however deep the fan-out
// goes; a fragment spread of an unknown fragment adds nothing (validation
// reports it).
func Check(doc *ast.QueryDocument, lim Limits) error {
	w := &walker{doc: doc, lim: lim, memo: map[string]figures{}, active: map[string]bool{}}
	for _, op := range doc.Operations {
		if err := w.check(w.set(op.SelectionSet)); err != nil {
			return err
		}
	}
	for _, def := range doc.Fragments {
		if err := w.check(w.fragment(def.Name)); err != nil {
			return err
		}
	}
	return nil
}

// check refuses figures over a limit.
func (w *walker) check(f figures, err error) error {
	switch {
	case err != nil:
		return err
	case f.selections > w.lim.Selections:
		return &Exceeded{Limit: "selections", Got: f.selections, Max: w.lim.Selections}
	case f.depth > w.lim.Depth:
		return &Exceeded{Limit: "depth", Got: f.depth, Max: w.lim.Depth}
	case f.aliases > w.lim.Aliases:
		return &Exceeded{Limit: "aliases", Got: f.aliases, Max: w.lim.Aliases}
	}
	return nil
}

type walker struct {
	doc    *ast.QueryDocument
	lim    Limits
	memo   map[string]figures
	active map[string]bool
}

// set adds up a selection set: each field counts one and its alias, and
// adds its own selections one level deeper; fragments count what their
// selections count.
func (w *walker) set(sel ast.SelectionSet) (figures, error) {
	var f figures
	for _, s := range sel {
		var sub figures
		var err error
		switch s := s.(type) {
		case *ast.Field:
			if sub, err = w.set(s.SelectionSet); err != nil {
				return f, err
			}
			sub.selections++
			if len(s.SelectionSet) > 0 {
				sub.depth++
			}
			if s.Alias != "" && s.Alias != s.Name {
				sub.aliases++
			}
		case *ast.InlineFragment:
			if sub, err = w.set(s.SelectionSet); err != nil {
				return f, err
			}
		case *ast.FragmentSpread:
			if sub, err = w.fragment(s.Name); err != nil {
				return f, err
			}
			sub.selections++
		}
		// The counts stop just past their limits, so that a fan-out of
		// fragments cannot overflow them.
		f.selections = min(f.selections+sub.selections, w.lim.Selections+1)
		f.aliases = min(f.aliases+sub.aliases, w.lim.Aliases+1)
		f.depth = max(f.depth, sub.depth)
	}
	return f, nil
}

// fragment adds up a named fragment once; an unknown one adds nothing
// (validation reports it) and a cycle is refused.
func (w *walker) fragment(name string) (figures, error) {
	if f, ok := w.memo[name]; ok {
		return f, nil
	}
	def := w.doc.Fragments.ForName(name)
	if def == nil {
		return figures{}, nil
	}
	if w.active[name] {
		return figures{}, &Exceeded{Limit: "fragments"}
	}
	w.active[name] = true
	f, err := w.set(def.SelectionSet)
	delete(w.active, name)
	if err != nil {
		return f, err
	}
	w.memo[name] = f
	return f, nil
}
