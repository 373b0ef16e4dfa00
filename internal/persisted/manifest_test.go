package persisted

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	docA = "query Materials { materials { totalCount } }"
	docB = "query Viewer { viewer { ownerID } }"
)

func TestHash(t *testing.T) {
	// The SHA-256 of "abc" (FIPS 180-2, appendix B.1).
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := Hash("abc"); got != abc {
		t.Errorf("Hash(abc) = %s; want %s", got, abc)
	}
	for h, want := range map[string]bool{
		abc:                     true,
		strings.ToUpper(abc):    false,
		abc[:63]:                false,
		abc + "0":               false,
		"sha256:" + abc[7:]:     false,
		strings.Repeat("g", 64): false,
		strings.Repeat("0", 64): true,
		"":                      false,
	} {
		if got := ValidHash(h); got != want {
			t.Errorf("ValidHash(%q) = %v; want %v", h, got, want)
		}
	}
}

func TestParseManifest(t *testing.T) {
	good := `{"` + Hash(docA) + `": "` + docA + `", "` + Hash(docB) + `": "` + docB + `"}`
	m, err := ParseManifest([]byte(good))
	if err != nil {
		t.Fatalf("ParseManifest(good) = %v", err)
	}
	if m.Len() != 2 {
		t.Errorf("Len() = %d; want 2", m.Len())
	}
	for _, doc := range []string{docA, docB} {
		if got, ok := m.Lookup(Hash(doc)); !ok || got != doc {
			t.Errorf("Lookup(Hash(%q)) = %q, %v; want the document", doc, got, ok)
		}
	}
	if got, ok := m.Lookup(Hash("{ __typename }")); ok {
		t.Errorf("Lookup of a document not in the manifest = %q; want none", got)
	}
	var none *Manifest
	if _, ok := none.Lookup(Hash(docA)); ok || none.Len() != 0 {
		t.Errorf("a nil manifest holds documents")
	}

	sha1A := "0123456789abcdef0123456789abcdef01234567" // the length of a sha1
	for _, tc := range []struct {
		name, manifest, want string
	}{
		{"not JSON", `{"a": `, "not a JSON object"},
		{"an array", `["` + docA + `"]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"data after the object", good + ` {}`, "unexpected data after the object"},
		{"a number for a document", `{"` + Hash(docA) + `": 1}`, "not a JSON object"},
		{"empty", `{}`, "no documents"},
		{"an empty document", `{"` + Hash("") + `": ""}`, "is empty"},
		{"a null document", `{"` + Hash(docA) + `": null}`, "is empty"},
		{"sha1 keys", `{"` + sha1A + `": "` + docA + `"}`, "hashAlgorithm: 'sha256'"},
		{"upper-case key", `{"` + strings.ToUpper(Hash(docA)) + `": "` + docA + `"}`, "is not a SHA-256 hash"},
		{"another document's hash", `{"` + Hash(docA) + `": "` + docA + `", "` + Hash(docA)[:60] + `beef": "` + docB + `"}`,
			"is not the SHA-256 of its document (that is " + Hash(docB) + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.manifest))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseManifest(%s) = %v, %v; want an error saying %q", tc.manifest, m, err, tc.want)
			}
		})
	}
}

func TestLoadManifest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "persisted-documents.json")
	if err := os.WriteFile(path, []byte(`{"`+Hash(docA)+`": "`+docA+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := LoadManifest(path)
	if err != nil || m.Len() != 1 {
		t.Fatalf("LoadManifest = %v, %v; want one document", m, err)
	}
	if _, err := LoadManifest(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Errorf("LoadManifest of a missing file succeeded")
	}
}
