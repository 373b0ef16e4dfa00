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
		eachField(walker.Document, op.SelectionSet, map[string]bool{}, func(f *ast.Field) bool {
			if f == nil {
				return true // an unknown fragment, which its own rule reports
			}
			key := cmp.Or(f.Alias, f.Name)
			if strings.HasPrefix(f.Name, "__") {
				addError(core.Message("%s must not select an introspection top level field (%s).", name, f.Name), core.At(f.Position))
			}
			if !seen[key] {
				seen[key] = true
				keys = append(keys, key)
				if len(keys) == 2 {
					second = f.Position
				}
			}
			return true
		})
		if len(keys) > 1 {
			addError(core.Message("%s must select only one top level field; it selects %d (%s). Send one subscription for each.",
				name, len(keys), strings.Join(keys, ", ")), core.At(second))
		}
	})
}

// eachField calls visit with every field of set, looking into its inline
// fragments and, once each (seen holds those spread so far), into the
// fragments of doc it spreads; a spread of a fragment doc lacks is
// visit(nil). It stops when visit returns false, and then returns false.
func eachField(doc *ast.QueryDocument, set ast.SelectionSet, seen map[string]bool, visit func(*ast.Field) bool) bool {
	for _, sel := range set {
		ok := true
		switch sel := sel.(type) {
		case *ast.Field:
			ok = visit(sel)
		case *ast.InlineFragment:
			ok = eachField(doc, sel.SelectionSet, seen, visit)
		case *ast.FragmentSpread:
			if fd := doc.Fragments.ForName(sel.Name); fd == nil {
				ok = visit(nil)
			} else if !seen[sel.Name] {
				seen[sel.Name] = true
				ok = eachField(doc, fd.SelectionSet, seen, visit)
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
