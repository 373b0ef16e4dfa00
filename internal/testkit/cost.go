package testkit

import (
	"fmt"
	"strings"
)

// FanOut is a document of levels fragments, each spreading the next one
// spread times, the last selecting spread aliases of __typename:
// spread^levels fields once expanded.
func FanOut(levels, spread int) string {
	var b strings.Builder
	b.WriteString("query { ...F0 }\n")
	for i := 0; i < levels; i++ {
		fmt.Fprintf(&b, "fragment F%d on Query {", i)
		for j := 0; j < spread; j++ {
			if i == levels-1 {
				fmt.Fprintf(&b, " a%d: __typename", j)
			} else {
				fmt.Fprintf(&b, " ...F%d", i+1)
			}
		}
		b.WriteString(" }\n")
	}
	return b.String()
}

// Cycle nests order -> configurator -> orders -> edges -> node (four
// levels a turn) for turns turns under order(id: 1): a query 1 + 4*turns
// levels deep.
func Cycle(turns int) string {
	return "{ order(id: 1) { " + strings.Repeat("configurator { orders(first: 1) { edges { node { ", turns) +
		"id" + strings.Repeat(" } } } }", turns) + " } }"
}

// Aliases is a query of n aliases of field (a selection such as
// "__typename" or "viewer { ownerID }").
func Aliases(n int, field string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	b.WriteString(" }")
	return b.String()
}
