package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxReadmeLines keeps the README a page a newcomer reads in ten minutes;
// everything longer belongs in a docs/ page linked from it.
const maxReadmeLines = 300

// markdownLink finds the target of an inline link or image, [text](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// outside are spellings of places beyond the repository that the
// documentation must not lean on: it has to stand on its own.
var outside = []string{"../shared", "/work/"}

// TestReadmeAndDocs keeps README.md short and the documentation
// self-contained: every relative link of README.md and docs/*.md names a file
// of the repository, none points outside it, and every docs/ page is
// reachable from the README.
func TestReadmeAndDocs(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme := readText(t, filepath.Join(root, "README.md"))
	if n := strings.Count(readme, "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a docs/ page", n, maxReadmeLines)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md pages found under %s (%v)", root, err)
	}
	linked := map[string]bool{}
	for _, file := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		for _, target := range checkPage(t, root, file) {
			if file == filepath.Join(root, "README.md") {
				linked[target] = true
			}
		}
	}
	for _, page := range pages {
		if !linked[page] {
			t.Errorf("README.md does not link to %s", rel(root, page))
		}
	}
}

// checkPage reports what in one page points outside the repository or at a
// missing file, and returns the files its relative links resolve to.
func checkPage(t *testing.T, root, file string) []string {
	text := readText(t, file)
	for _, s := range outside {
		if strings.Contains(text, s) {
			t.Errorf("%s mentions %q, outside the repository: write what is needed into the repository instead", rel(root, file), s)
		}
	}
	var targets []string
	for _, m := range markdownLink.FindAllStringSubmatch(withoutCode(text), -1) {
		link, _, _ := strings.Cut(m[1], "#")
		if link == "" || strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
			continue
		}
		target := filepath.Join(filepath.Dir(file), filepath.FromSlash(link))
		if r := rel(root, target); r == ".." || strings.HasPrefix(r, "../") || filepath.IsAbs(link) {
			t.Errorf("%s links to %s, outside the repository", rel(root, file), m[1])
			continue
		}
		if info, err := os.Stat(target); err != nil || info.IsDir() {
			t.Errorf("%s links to %s, which is not a file of the repository", rel(root, file), m[1])
			continue
		}
		targets = append(targets, target)
	}
	return targets
}

// withoutCode drops fenced code blocks, whose brackets are examples, not links.
func withoutCode(text string) string {
	var b strings.Builder
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func readText(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func rel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}
