// Package bufpool recycles the byte slices answers are built in, so that
// a list's JSON does not grow a new buffer from nothing on every request
// (REST's appenders, GraphQL's field writers and its response).
package bufpool

import "sync"

// MaxPooled is the largest capacity given back to the pool: buffers grown
// past it (a very large list) are left to the collector, so that one big
// answer does not pin its memory for every later small one.
const MaxPooled = 1 << 20

var pool = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// Get returns an empty buffer of at least 8 KiB capacity.
func Get() []byte { return (*pool.Get().(*[]byte))[:0] }

// Put gives b back for another request. The caller must not use b (or
// anything sliced from it) afterwards.
func Put(b []byte) {
	if cap(b) == 0 || cap(b) > MaxPooled {
		return
	}
	b = b[:0]
	pool.Put(&b)
}
