package archtest

import (
	"go/ast"
	"go/types"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// tenancyOwner is the one file that decides tenancy, which owner's
// records a caller is confined to (rule.Owner): every other layer asks it
// and applies its answer.
const tenancyOwner = "internal/rule/rule.go"

// TestTenancyDecidedOnce fails when a second decision of tenancy appears:
// the field OwnerID of a viewer.Viewer (the caller of a request) is read,
// or set, in tenancyOwner and nowhere else in hand-written non-test code.
// Building a Viewer with a composite literal (internal/auth's token
// checks, the test fixture) names the field as a key, which is a write and
// not counted. A layer that needs the owner (SQL that ent does not build,
// a subscription, a lock) calls rule.Owner instead.
func TestTenancyDecidedOnce(t *testing.T) {
	root, pkgs := scopeLoad(t)
	owned := 0
	for _, at := range ownerReads(t, root, pkgs) {
		if file, _, _ := strings.Cut(at, ":"); file != tenancyOwner {
			t.Errorf("%s reads a viewer's OwnerID (decides tenancy); only %s may: ask rule.Owner instead", at, tenancyOwner)
			continue
		}
		owned++
	}
	// If the owner no longer seems to read the field, this test has lost
	// sight of the rule and would pass whatever the code does.
	if owned == 0 {
		t.Errorf("%s reads no viewer's OwnerID; the test no longer sees the tenancy rule", tenancyOwner)
	}
}

// ownerReads lists, as file:line from root, the selections of the field
// viewer.Viewer.OwnerID in the hand-written files of pkgs.
func ownerReads(t *testing.T, root string, pkgs []*packages.Package) []string {
	t.Helper()
	field := viewerField(t, pkgs, "OwnerID")
	var out []string
	inspectHandWritten(t, root, pkgs, func(p *packages.Package, file string, n ast.Node) {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if sel := p.TypesInfo.Selections[s]; sel != nil && sel.Obj() == field {
				out = append(out, file+":"+strconv.Itoa(p.Fset.Position(s.Sel.Pos()).Line))
			}
		}
	})
	return out
}

// viewerField finds the field name of viewer.Viewer among pkgs.
func viewerField(t *testing.T, pkgs []*packages.Package, name string) *types.Var {
	t.Helper()
	const viewerPath = "github.com/configurator/catalogue/internal/viewer"
	for _, p := range pkgs {
		if p.PkgPath != viewerPath {
			continue
		}
		if st, ok := p.Types.Scope().Lookup("Viewer").Type().Underlying().(*types.Struct); ok {
			for i := range st.NumFields() {
				if st.Field(i).Name() == name {
					return st.Field(i)
				}
			}
		}
	}
	t.Fatalf("viewer.Viewer.%s not found", name)
	return nil
}
