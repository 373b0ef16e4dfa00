package bufpool

import "testing"

func TestGetIsEmptyAndReused(t *testing.T) {
	b := Get()
	if len(b) != 0 || cap(b) < 8<<10 {
		t.Fatalf("Get: len %d cap %d, want 0 and at least 8 KiB", len(b), cap(b))
	}
	b = append(b, "left over"...)
	Put(b)
	if c := Get(); len(c) != 0 {
		t.Fatalf("a recycled buffer came back with %q in it", c)
	}
}

func TestPutDropsHugeBuffers(t *testing.T) {
	// Nothing to observe but that it does not panic and that a later Get
	// still answers a normal buffer.
	Put(make([]byte, 0, MaxPooled+1))
	Put(nil)
	if b := Get(); cap(b) > MaxPooled {
		t.Fatalf("a buffer of capacity %d was kept", cap(b))
	}
}
