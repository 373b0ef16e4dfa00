package storage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
)

// Memory is a Store in memory, for tests and demos: fast, needing no
// clean-up, and safe for concurrent use. It refuses the same names Disk
// refuses, so tests against it hold for the real stores.
type Memory struct {
	mu    sync.RWMutex
	files map[string][]byte
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{files: make(map[string][]byte)}
}

// Put stores a copy of data, so the caller may reuse its slice.
func (m *Memory) Put(ctx context.Context, name string, data []byte) error {
	if err := check(ctx, "store", name); err != nil {
		return err
	}
	m.mu.Lock()
	m.files[name] = bytes.Clone(data)
	m.mu.Unlock()
	return nil
}

// Open returns a reader over the stored bytes. Like Disk's file it also
// seeks, so the file handler behaves the same over both.
func (m *Memory) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := check(ctx, "open", name); err != nil {
		return nil, err
	}
	m.mu.RLock()
	b, ok := m.files[name]
	m.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("open %s: %w", name, ErrNotFound)
	}
	// Stored slices are never modified (Put replaces them), so readers can
	// share them without copying.
	return memoryFile{bytes.NewReader(b)}, nil
}

// Delete removes the file stored under name; an absent file is no error.
func (m *Memory) Delete(ctx context.Context, name string) error {
	if err := check(ctx, "delete", name); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.files, name)
	m.mu.Unlock()
	return nil
}

// Len returns how many files are stored, so tests can check that a failed
// operation cleaned up after itself.
func (m *Memory) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.files)
}

// memoryFile is an opened Memory file: a reader and seeker with a no-op
// Close.
type memoryFile struct {
	*bytes.Reader
}

func (memoryFile) Close() error { return nil }
