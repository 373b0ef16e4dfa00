// Package persisted keeps the GraphQL documents a client may name by
// their SHA-256 instead of sending their text: the trusted documents of a
// manifest loaded at start (PERSISTED_DOCUMENTS), and the cache of
// automatic persisted queries (APQ) that clients fill as they go, in
// process or in a Redis shared by every replica (REDIS_URL).
package persisted

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
)

// Hash is the lower-case hex SHA-256 of a document's text, the name APQ
// and the manifest give it.
func Hash(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:])
}

// ValidHash reports whether h has the form of a Hash: 64 lower-case hex
// digits.
func ValidHash(h string) bool {
	return len(h) == sha256.Size*2 && strings.Trim(h, "0123456789abcdef") == ""
}

// Manifest is a set of trusted documents by their hash, read from a file
// in graphql-codegen's persisted-documents format (what its client preset
// writes as persisted-documents.json with persistedDocuments enabled and
// hashAlgorithm sha256). It is read once and never changes, so it needs
// no lock.
type Manifest struct {
	docs map[string]string
}

// Lookup returns the document whose hash is h.
func (m *Manifest) Lookup(h string) (string, bool) {
	if m == nil {
		return "", false
	}
	doc, ok := m.docs[h]
	return doc, ok
}

// Len is the number of documents.
func (m *Manifest) Len() int {
	if m == nil {
		return 0
	}
	return len(m.docs)
}

// LoadManifest reads the manifest at path (ParseManifest). Its errors do
// not repeat the path: the caller names it, with the setting that gave it.
func LoadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, pe.Err
	} else if err != nil {
		return nil, err
	}
	return ParseManifest(b)
}

// ParseManifest reads a manifest: one JSON object whose keys are the
// SHA-256 of their values, non-empty document texts. Any other shape, or a
// key that is not its document's hash (a manifest hashed with sha1, the
// client preset's default, or edited by hand), is refused with an error
// naming the key, so that a server never starts with a manifest whose
// documents its clients cannot name.
func ParseManifest(b []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var docs map[string]*string
	if err := dec.Decode(&docs); err != nil {
		return nil, fmt.Errorf("not a JSON object of SHA-256 hashes to documents: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("not a JSON object of SHA-256 hashes to documents: unexpected data after the object")
	}
	if docs == nil {
		return nil, fmt.Errorf("not a JSON object of SHA-256 hashes to documents: null")
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("the manifest holds no documents")
	}
	m := &Manifest{docs: make(map[string]string, len(docs))}
	// In order, so that the error names the same key every time.
	for _, k := range slices.Sorted(maps.Keys(docs)) {
		doc := docs[k]
		switch {
		case doc == nil || strings.TrimSpace(*doc) == "":
			return nil, fmt.Errorf("the document of %q is empty", k)
		case !ValidHash(k):
			return nil, fmt.Errorf("key %q is not a SHA-256 hash (64 lower-case hex digits); graphql-codegen's client preset needs persistedDocuments: {hashAlgorithm: 'sha256'}", k)
		case Hash(*doc) != k:
			return nil, fmt.Errorf("key %q is not the SHA-256 of its document (that is %s)", k, Hash(*doc))
		}
		m.docs[k] = *doc
	}
	return m, nil
}
