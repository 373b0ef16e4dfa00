package fast

// Written reports whether v is the answer of a field the fast path wrote
// itself, for the tests of package fast_test.
func Written(v any) bool {
	_, ok := v.(rendered)
	return ok
}
