package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a hand-written non-test function may be, from
// its func line to its closing brace.
const maxFuncLines = 60

// maxServeLines bounds cmd/server's serve, which should read as a list of
// parts, and each part in serve.go.
const maxServeLines = 40

// longFuncs are the functions still over maxFuncLines, each with the helper
// who shortens it. The list only shrinks: a function that fits is an error
// until its entry is removed.
var longFuncs = map[string]string{}

// generators are the programs that write generated code, and demo data; both
// are exempt from the length rule.
var generators = []string{
	"ent/entc.go",
	"graph/gqlgen/",
	"graph/fast/gen/",
	"rest/gen/",
	"internal/demo/",
}

// TestFunctionLength keeps every hand-written non-test function at most
// maxFuncLines long, apart from the shrinking list in longFuncs.
func TestFunctionLength(t *testing.T) {
	lengths := funcLengths(t)
	for name, n := range lengths {
		if _, listed := longFuncs[name]; !listed && n > maxFuncLines {
			t.Errorf("%s is %d lines, more than %d: split it into functions that each do one thing", name, n, maxFuncLines)
		}
	}
	for name, owner := range longFuncs {
		n, found := lengths[name]
		switch {
		case !found:
			t.Errorf("%s (owner %s) no longer exists: remove it from longFuncs", name, owner)
		case n <= maxFuncLines:
			t.Errorf("%s (owner %s) is now %d lines, at most %d: remove it from longFuncs", name, owner, n, maxFuncLines)
		}
	}
	if _, found := lengths["cmd/server/serve.go:serve"]; !found {
		t.Error("cmd/server/serve.go:serve not found")
	}
	for name, n := range lengths {
		if strings.HasPrefix(name, "cmd/server/serve.go:") && n > maxServeLines {
			t.Errorf("%s is %d lines, more than %d: serve and each of its parts should read at a glance", name, n, maxServeLines)
		}
	}
}

// funcLengths measures every function declared in a hand-written non-test Go
// file of the repository, keyed "path:Name" or "path:Type.Method".
func funcLengths(t *testing.T) map[string]int {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	lengths := map[string]int{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || generator(rel) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
				n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
				lengths[rel+":"+funcName(fn)] = n
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lengths) < 100 {
		t.Fatalf("measured only %d functions under %s: is the walk rooted at the repository?", len(lengths), root)
	}
	return lengths
}

func generator(rel string) bool {
	for _, g := range generators {
		if rel == g || strings.HasPrefix(rel, g) {
			return true
		}
	}
	return false
}

// funcName names a function "Name", or a method "Type.Method".
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fn.Name.Name
	}
}
