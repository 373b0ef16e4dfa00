package cost

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/configurator/catalogue/internal/testkit"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

var limits = Limits{Selections: 1000, Depth: 10, Aliases: 30}

func nested(depth int) string {
	return strings.Repeat("{ order(id: 1) { configurator ", depth/2) + "{ id }" + strings.Repeat("} }", depth/2)
}

func aliases(n int) string { return testkit.Aliases(n, "__typename") }

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, query, limit string
	}{
		{"small query", `{ ordersPage { data { id configurator { id name } } } }`, ""},
		{"fan-out of fragments", testkit.FanOut(10, 10), "selections"},
		{"fan-out within the limit", testkit.FanOut(2, 5), ""},
		{"deep nesting", nested(50), "depth"},
		{"nesting at the limit", nested(10), ""},
		{"many aliases", aliases(1000), "aliases"},
		{"aliases within the limit", aliases(30), ""},
		{"fragment cycle", `query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }`, "fragments"},
		// gqlparser validates every operation and fragment, whichever the
		// request names, so each is measured.
		{"every operation measured", `query Small { viewer { ownerID } } query Big ` + aliases(100), "aliases"},
		{"unused fragment measured", "query { viewer { ownerID } }\n" + strings.Replace(testkit.FanOut(10, 10), "query { ...F0 }", "", 1), "selections"},
		{"unused fragment within the limits", `query { viewer { ownerID } } fragment U on Query { a: viewer { ownerID } }`, ""},
		{"unknown fragment left to validation", `{ ...Nope }`, ""},
		{"inline fragments", `{ ... on Query { viewer { ownerID } } }`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			start := time.Now()
			err = Check(doc, limits)
			var ex *Exceeded
			switch {
			case tc.limit == "" && err != nil:
				t.Errorf("Check = %v; want nil", err)
			case tc.limit != "" && (!errors.As(err, &ex) || ex.Limit != tc.limit):
				t.Errorf("Check = %v; want a refusal of %s", err, tc.limit)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Check took %s", d)
			}
		})
	}
}

func TestExceededMessage(t *testing.T) {
	for _, tc := range []struct {
		e    Exceeded
		want string
	}{
		{Exceeded{Limit: "depth", Got: 12, Max: 10}, "the query nests 12 levels deep; the limit is 10"},
		{Exceeded{Limit: "selections", Got: 1001, Max: 1000}, "the query selects more than 1000 fields (fragments expanded); ask for less, or in several requests"},
		{Exceeded{Limit: "aliases", Got: 31, Max: 30}, "the query has more than 30 aliased fields (fragments expanded)"},
		{Exceeded{Limit: "fragments"}, "the document's fragments spread each other in a cycle"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q; want %q", got, tc.want)
		}
	}
}

// FuzzCheck: whatever document parses, the walk ends without a panic, and
// a document it accepts is within every limit when expanded naively.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`{ a { b { c } } }`, testkit.FanOut(3, 3), nested(12), aliases(40),
		`query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }`,
		`query A { x } query B { y: x z: x }`, `{ ... on Q { ...F } } fragment F on Q { a: b }`,
	} {
		f.Add(seed)
	}
	lim := Limits{Selections: 50, Depth: 5, Aliases: 5}
	f.Fuzz(func(t *testing.T, query string) {
		doc, err := parser.ParseQuery(&ast.Source{Input: query})
		if err != nil {
			return
		}
		if Check(doc, lim) != nil {
			return
		}
		for _, op := range doc.Operations {
			n := naive{doc: doc}
			n.walk(op.SelectionSet, 0)
			if n.selections > lim.Selections || n.depth > lim.Depth || n.aliases > lim.Aliases {
				t.Errorf("Check accepted %q, whose operation expands to %d selections, depth %d, %d aliases", query, n.selections, n.depth, n.aliases)
			}
		}
	})
}

// naive expands fragments in place, every time, and counts as Check does;
// it stops counting far past the fuzz limits.
type naive struct {
	doc                        *ast.QueryDocument
	selections, depth, aliases int
}

func (n *naive) walk(sel ast.SelectionSet, depth int) {
	for _, s := range sel {
		if n.selections > 1000 {
			return
		}
		switch s := s.(type) {
		case *ast.Field:
			n.selections++
			if s.Alias != "" && s.Alias != s.Name {
				n.aliases++
			}
			if len(s.SelectionSet) > 0 {
				n.depth = max(n.depth, depth+1)
				n.walk(s.SelectionSet, depth+1)
			}
		case *ast.InlineFragment:
			n.walk(s.SelectionSet, depth)
		case *ast.FragmentSpread:
			n.selections++
			if def := n.doc.Fragments.ForName(s.Name); def != nil {
				n.walk(def.SelectionSet, depth)
			}
		}
	}
}
