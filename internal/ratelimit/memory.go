package ratelimit

import (
	"context"
	"sync"
	"time"
)

// Memory is the in-memory Limiter, the twin of Redis without a server:
// each key is a bucket of Limit units that refills at Limit per Window,
// kept as the generic cell rate algorithm's one timestamp per key (the
// time at which the bucket will be full again), as redis_rate keeps it, so
// an Allow is a map lookup and a little arithmetic under a mutex. Budgets
// are per process: with several replicas each keeps its own; Redis shares
// them.
type Memory struct {
	limit int
	// interval is the time one unit takes to refill; burst is the time
	// the whole budget takes (limit intervals).
	interval, burst int64
	now             func() time.Time

	mu   sync.Mutex
	full map[string]int64 // key -> when its bucket is full again (Unix ns)
	// sweep is when idle keys are next dropped: a key whose bucket is
	// full is the same as an absent one.
	sweep int64
}

// NewMemory returns a limiter of limit units per Window for every key;
// limit must be positive.
func NewMemory(limit int) *Memory {
	interval := int64(Window) / int64(limit)
	return &Memory{limit: limit, interval: interval, burst: interval * int64(limit), now: time.Now, full: map[string]int64{}}
}

// Allow implements Limiter.
func (m *Memory) Allow(_ context.Context, key string, n int) (Status, error) {
	n = min(n, m.limit)
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropIdle(now)
	full := max(m.full[key], now)
	next := full + int64(n)*m.interval
	if next-now > m.burst {
		s := m.status(full, now)
		s.RetryAfter = time.Duration(next - m.burst - now)
		return s, nil
	}
	m.full[key] = next
	s := m.status(next, now)
	s.Allowed = true
	return s, nil
}

// status describes a bucket that is full again at full.
func (m *Memory) status(full, now int64) Status {
	used := full - now
	return Status{
		Limit:     m.limit,
		Remaining: int(max(0, (m.burst-used)/m.interval)),
		Reset:     time.Duration(used),
	}
}

// dropIdle forgets, once a Window, the keys whose buckets are full, so
// that the map holds only the keys used in the last minute.
func (m *Memory) dropIdle(now int64) {
	if now < m.sweep {
		return
	}
	m.sweep = now + int64(Window)
	for k, full := range m.full {
		if full <= now {
			delete(m.full, k)
		}
	}
}
