package graph_test

import (
	"testing"

	"github.com/configurator/catalogue/graph"
	"github.com/configurator/catalogue/graph/generated"
	"github.com/configurator/catalogue/graph/scalar"
)

// TestCursorKinds: every connection of the schema that takes a cursor
// knows the kind of its cursors' sort key for every field its orderBy
// names, so that no sort of a connection refuses its own cursors.
func TestCursorKinds(t *testing.T) {
	s := generated.NewExecutableSchema(generated.Config{}).Schema()
	seen := 0
	for _, typ := range s.Types {
		for _, f := range typ.Fields {
			if a := f.Arguments.ForName("after"); a == nil || a.Type.Name() != "Cursor" {
				continue
			}
			seen++
			if k := graph.CursorKind("", ""); k != scalar.IntKind {
				t.Fatalf("default sort kind %d; want IntKind", k)
			}
			order := f.Arguments.ForName("orderBy")
			if order == nil {
				continue
			}
			input := s.Types[order.Type.Name()]
			enum := s.Types[input.Fields.ForName("field").Type.Name()]
			for _, v := range enum.EnumValues {
				if k := graph.CursorKind(input.Name, v.Name); k == scalar.NoKind || k == scalar.AnyKind {
					t.Errorf("%s.%s sorted by %s: cursor kind %d; want a scalar kind", typ.Name, f.Name, v.Name, k)
				}
			}
		}
	}
	if seen < 10 {
		t.Errorf("%d connections with cursors; want the schema's 10 or more", seen)
	}
}
