package persisted

import (
	"container/list"
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

// DefaultMemoryBytes bounds the text an in-process APQ cache keeps: about
// a thousand documents of a few kilobytes, a small share of the process's
// 48 MiB soft memory limit, however many documents clients register.
const DefaultMemoryBytes = 4 << 20

// Memory is an in-process APQ cache bounded by the bytes of text it
// holds: the least recently used documents are dropped first. A bound by
// count alone would let a client fill it with documents of the largest
// size the endpoint takes.
type Memory struct {
	max int

	mu    sync.Mutex
	size  int
	byKey map[string]*list.Element
	lru   *list.List // of *entry, most recently used first
}

type entry struct{ key, doc string }

var _ graphql.Cache[string] = (*Memory)(nil)

// NewMemory returns a cache of at most maxBytes of keys and documents.
func NewMemory(maxBytes int) *Memory {
	return &Memory{max: maxBytes, byKey: map[string]*list.Element{}, lru: list.New()}
}

// Get returns the document of key.
func (m *Memory) Get(_ context.Context, key string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.byKey[key]
	if !ok {
		return "", false
	}
	m.lru.MoveToFront(el)
	return el.Value.(*entry).doc, true
}

// Add keeps doc under key, dropping the least recently used documents
// beyond the bound; a document larger than the whole bound is not kept.
func (m *Memory) Add(_ context.Context, key, doc string) {
	n := len(key) + len(doc)
	if n > m.max {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byKey[key]; ok {
		m.lru.MoveToFront(el)
		return
	}
	m.byKey[key] = m.lru.PushFront(&entry{key: key, doc: doc})
	m.size += n
	for m.size > m.max {
		e := m.lru.Remove(m.lru.Back()).(*entry)
		delete(m.byKey, e.key)
		m.size -= len(e.key) + len(e.doc)
	}
}

// Len is the number of documents held.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lru.Len()
}
