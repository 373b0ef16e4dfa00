package endpoint

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// validationRules are gqlparser's default rules with its
// SingleFieldSubscriptions rule replaced by singleRootField: gqlparser's
// counts distinct field names, so `subscription { a: events b: events }`
// passed validation and failed at run time.
func validationRules() *rules.Rules {
	r := rules.NewDefaultRules()
	r.ReplaceRule(rules.SingleFieldSubscriptionsRule.Name, singleRootField)
	return r
}

// singleRootField is the GraphQL specification's "Single root field"
// rule (section 5.2.3.1): the selection set of a subscription, fragments
// included, must group into exactly one response key (a field's alias or
// name), which is not an introspection field.
func singleRootField(observers *core.Events, addError core.AddErrFunc) {
	observers.OnOperation(func(walker *core.Walker, op *ast.OperationDefinition) {
		if walker.Schema.Subscription == nil || op.Operation != ast.Subscription {
			return
		}
		name := "An anonymous subscription"
		if op.Name != "" {
			name = "Subscription " + strconv.Quote(op.Name)
		}
		var keys []string
		var second *ast.Position
		seen := map[string]bool{}
		visited := map[string]bool{}
		var walk func(ast.SelectionSet)
		walk = func(set ast.SelectionSet) {
			for _, sel := range set {
				switch sel := sel.(type) {
				case *ast.Field:
					key := cmp.Or(sel.Alias, sel.Name)
					if strings.HasPrefix(sel.Name, "__") {
						addError(core.Message("%s must not select an introspection top level field (%s).", name, sel.Name), core.At(sel.Position))
					}
					if !seen[key] {
						seen[key] = true
						keys = append(keys, key)
						if len(keys) == 2 {
							second = sel.Position
						}
					}
				case *ast.InlineFragment:
					walk(sel.SelectionSet)
				case *ast.FragmentSpread:
					if sel.Definition != nil && !visited[sel.Name] {
						visited[sel.Name] = true
						walk(sel.Definition.SelectionSet)
					}
				}
			}
		}
		walk(op.SelectionSet)
		if len(keys) > 1 {
			addError(core.Message("%s must select only one top level field; it selects %d (%s). Send one subscription for each.",
				name, len(keys), strings.Join(keys, ", ")), core.At(second))
		}
	})
}
