package persisted

import (
	"context"
	"strings"
	"testing"
)

// TestMemoryBound: the cache holds at most its bytes of keys and
// documents, dropping the least recently used first, and never a document
// larger than the whole bound.
func TestMemoryBound(t *testing.T) {
	ctx := context.Background()
	doc := func(c string) string { return strings.Repeat(c, 36) } // 4 + 36 bytes with a 4-byte key
	m := NewMemory(100)
	m.Add(ctx, "keyA", doc("a"))
	m.Add(ctx, "keyB", doc("b"))
	if _, ok := m.Get(ctx, "keyA"); !ok { // A is now the most recently used
		t.Fatal("keyA missing before the bound is reached")
	}
	m.Add(ctx, "keyC", doc("c")) // 120 bytes: B goes
	for key, want := range map[string]string{"keyA": doc("a"), "keyB": "", "keyC": doc("c")} {
		if got, ok := m.Get(ctx, key); got != want || ok != (want != "") {
			t.Errorf("Get(%s) = %q, %v; want %q", key, got, ok, want)
		}
	}
	m.Add(ctx, "keyA", doc("a")) // again: nothing added
	if m.Len() != 2 {
		t.Errorf("Len() = %d; want 2", m.Len())
	}
	m.Add(ctx, "huge", strings.Repeat("x", 97))
	if _, ok := m.Get(ctx, "huge"); ok || m.Len() != 2 {
		t.Errorf("a document over the whole bound was kept (or evicted others): Len() = %d", m.Len())
	}
}
