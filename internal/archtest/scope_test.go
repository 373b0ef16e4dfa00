// Package archtest holds tests of the repository's shape: rules that no
// single package's tests can see.
package archtest

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

// scopeOwner is the one file that decides the token scopes (the
// dashboard scope and the share scope): every other layer names an
// operation to auth.Allow and passes its answer on.
const scopeOwner = "internal/auth/scope.go"

// scopeDecision is a place that decides a caller's scope: it compares the
// Kind of a viewer.Viewer, in an ==, a != or a switch.
type scopeDecision struct {
	at string // file:line, from the module root
	// rule is what is compared with: "dashboard" (viewer.KindDashboard),
	// "share" (viewer.KindOpenAPI), or "scope" (anything else).
	rule string
}

// TestScopeDecidedOnce fails when a second decision of the dashboard or
// the share scope appears: the Kind of a viewer (the caller of a request)
// is compared in scopeOwner and nowhere else in hand-written non-test
// code. A layer that needs the answer early (REST before it reads a body,
// a write workflow before it looks anything up) calls auth.Allow with its
// operation instead.
func TestScopeDecidedOnce(t *testing.T) {
	root, pkgs := scopeLoad(t)
	found := scopeDecisions(t, root, pkgs)
	owned := map[string]int{}
	for _, d := range found {
		file, _, _ := strings.Cut(d.at, ":")
		if file != scopeOwner {
			t.Errorf("%s decides the %s scope (compares a viewer's Kind); only %s may: ask auth.Allow instead", d.at, d.rule, scopeOwner)
			continue
		}
		owned[d.rule]++
	}
	// The owner decides both scopes; if it no longer seems to, this test
	// has lost sight of them and would pass whatever the code does.
	for _, rule := range []string{"dashboard", "share"} {
		if owned[rule] == 0 {
			t.Errorf("%s decides no %s scope (no comparison of a viewer's Kind with its kind); the test no longer sees the rule", scopeOwner, rule)
		}
	}
}

// module holds the module's packages, type-checked once for every test of
// this package that needs them (TestScopeDecidedOnce,
// TestTenancyDecidedOnce): a load takes seconds.
var module struct {
	once sync.Once
	root string
	pkgs []*packages.Package
	errs []string
}

// scopeLoad type-checks every package of the module without its tests,
// and returns them with the module's root directory.
func scopeLoad(t *testing.T) (root string, pkgs []*packages.Package) {
	t.Helper()
	module.once.Do(func() {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			module.errs = append(module.errs, err.Error())
			return
		}
		cfg := &packages.Config{
			Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
			Dir:  root,
		}
		pkgs, err := packages.Load(cfg, "./...")
		if err != nil {
			module.errs = append(module.errs, err.Error())
			return
		}
		packages.Visit(pkgs, nil, func(p *packages.Package) {
			for _, e := range p.Errors {
				module.errs = append(module.errs, fmt.Sprintf("load %s: %v", p.PkgPath, e))
			}
		})
		module.root, module.pkgs = root, pkgs
	})
	for _, e := range module.errs {
		t.Error(e)
	}
	if t.Failed() {
		t.FailNow()
	}
	return module.root, module.pkgs
}

// scopeDecisions lists the comparisons of a viewer's Kind in the
// hand-written files of pkgs.
func scopeDecisions(t *testing.T, root string, pkgs []*packages.Package) []scopeDecision {
	t.Helper()
	const viewerPath = "github.com/configurator/catalogue/internal/viewer"
	var kind *types.Var
	consts := map[types.Object]string{}
	for _, p := range pkgs {
		if p.PkgPath != viewerPath {
			continue
		}
		obj := p.Types.Scope().Lookup("Viewer")
		st, ok := obj.Type().Underlying().(*types.Struct)
		if !ok {
			t.Fatalf("viewer.Viewer is %v, not a struct", obj.Type())
		}
		for i := range st.NumFields() {
			if st.Field(i).Name() == "Kind" {
				kind = st.Field(i)
			}
		}
		consts[p.Types.Scope().Lookup("KindDashboard")] = "dashboard"
		consts[p.Types.Scope().Lookup("KindOpenAPI")] = "share"
	}
	if kind == nil || len(consts) != 2 {
		t.Fatalf("viewer.Viewer.Kind, viewer.KindDashboard or viewer.KindOpenAPI not found")
	}
	var out []scopeDecision
	inspectHandWritten(t, root, pkgs, func(p *packages.Package, file string, n ast.Node) {
		decide := func(n ast.Node, compared ...ast.Expr) {
			if !slices.ContainsFunc(compared, func(e ast.Expr) bool { return refers(p.TypesInfo, e, kind) }) {
				return
			}
			rule := "scope"
			for _, e := range compared {
				for obj, r := range consts {
					if refers(p.TypesInfo, e, obj) {
						rule = r
					}
				}
			}
			out = append(out, scopeDecision{at: file + ":" + strconv.Itoa(p.Fset.Position(n.Pos()).Line), rule: rule})
		}
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				decide(n, n.X, n.Y)
			}
		case *ast.SwitchStmt:
			if n.Tag != nil {
				cases := []ast.Expr{n.Tag}
				for _, s := range n.Body.List {
					cases = append(cases, s.(*ast.CaseClause).List...)
				}
				decide(n, cases...)
			}
		}
	})
	return out
}

// inspectHandWritten calls visit for every node of the hand-written
// (not generated) files of pkgs, with the file's slash-separated path
// from root, so that each rule test only says what it looks for.
func inspectHandWritten(t *testing.T, root string, pkgs []*packages.Package, visit func(p *packages.Package, file string, n ast.Node)) {
	t.Helper()
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			if ast.IsGenerated(f) {
				continue
			}
			file, err := filepath.Rel(root, p.Fset.Position(f.Pos()).Filename)
			if err != nil {
				t.Fatal(err)
			}
			file = filepath.ToSlash(file)
			ast.Inspect(f, func(n ast.Node) bool {
				visit(p, file, n)
				return true
			})
		}
	}
}

// refers reports whether e mentions obj (a use of it, or the selection
// of a field).
func refers(info *types.Info, e ast.Expr, obj types.Object) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if info.Uses[n] == obj {
				found = true
			}
		case *ast.SelectorExpr:
			if s := info.Selections[n]; s != nil && s.Obj() == obj {
				found = true
			}
		}
		return !found
	})
	return found
}
