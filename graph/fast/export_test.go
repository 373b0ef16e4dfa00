package fast

// Written reports whether v is the answer of a field the fast path wrote
// itself, for the tests of package fast_test.
func Written(v any) bool {
	_, ok := v.(rendered)
	return ok
}

// SharedLen is the number of selections shared across requests.
func SharedLen() int {
	shared.mu.RLock()
	defer shared.mu.RUnlock()
	return shared.n
}

// SharedText is the length of the document texts shared selections hold.
func SharedText() int {
	shared.mu.RLock()
	defer shared.mu.RUnlock()
	return shared.text
}

// MaxSharedText is maxSharedText, for the tests of package fast_test.
const MaxSharedText = maxSharedText
