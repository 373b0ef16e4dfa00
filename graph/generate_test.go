package graph_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsCurrent runs `go generate ./...` (ent, entgql,
// gqlgen with the fast path's writers, and REST's appenders) on a copy of
// the module and fails if any generated file differs
// from the committed one, or if generation adds or removes a file.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerates all code; skipped with -short")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := copyTree(root, tmp); err != nil {
		t.Fatalf("copy module: %v", err)
	}
	cmd := exec.Command("go", "generate", "./...")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go generate: %v\n%s", err, out)
	}
	for _, dir := range []string{"ent", "graph", "rest"} {
		before, after := listFiles(t, filepath.Join(root, dir)), listFiles(t, filepath.Join(tmp, dir))
		for name, want := range before {
			got, ok := after[name]
			if !ok {
				t.Errorf("%s/%s is not generated any more: delete it", dir, name)
			} else if !bytes.Equal(got, want) {
				t.Errorf("%s/%s differs from its sources: run go generate ./... and commit", dir, name)
			}
		}
		for name := range after {
			if _, ok := before[name]; !ok {
				t.Errorf("%s/%s is generated but not in the tree: run go generate ./... and commit", dir, name)
			}
		}
	}
}

// copyTree copies the module's sources (not .git, data or build output).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel == ".git" || rel == "data" || strings.HasPrefix(d.Name(), ".") && rel != "." && rel != ".ci" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

func listFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		b, err := os.ReadFile(path)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
