package webhook

import (
	"context"
	"sync"
	"time"
)

// DefaultOwnerShare is the most attempts one owner has in flight on a
// replica that sends workers at once: a quarter of them (at least one),
// so that an owner whose endpoints all hang until their timeout holds a
// quarter of the replica's sending and the others keep the rest.
func DefaultOwnerShare(workers int) int { return max(1, workers/4) }

// patience is how long an attempt waits for its owner's share to free up
// while none of the owner's attempts ends: longer, and the owner's
// endpoints are taken to be slow, and the delivery is deferred (its
// owner's next turn is booked) rather than held in a job that River could
// give to another owner.
const patience = 250 * time.Millisecond

// fair shares the sending of one replica among owners: at most total
// attempts in flight, at most share of them an owner's, and at most share
// more of an owner's waiting for its turn (each wait holds a River worker,
// which is shared capacity too). An attempt that may not wait is deferred:
// the caller puts it back in the queue, due at the owner's booked turn
// (defer), so that an owner's backlog is spread over the time its share
// can send it instead of being fetched again and again. It is per
// replica: each replica gives each owner its own share.
type fair struct {
	total, share int
	mu           sync.Mutex
	inFlight     int
	owners       map[int]*lane
	// changed is closed, and replaced, whenever an attempt ends.
	changed chan struct{}
}

// lane is one owner's part of a replica's sending.
type lane struct {
	inFlight, waiting int
	// started holds when each attempt in flight began, so that a slow
	// owner's pace is known before its attempts end.
	started map[*slot]time.Time
	// ended is when an attempt of the owner last ended: the lane moves
	// while that is recent.
	ended time.Time
	// pace is a moving average of the owner's attempt durations.
	pace time.Duration
	// booked is when the owner's deferred deliveries are due up to.
	booked time.Time
}

// slot is one attempt's place in the replica's sending; release gives it
// back.
type slot struct {
	f     *fair
	owner int
}

func newFair(total, share int) *fair {
	return &fair{total: total, share: min(max(share, 1), total), owners: map[int]*lane{}, changed: make(chan struct{})}
}

// lane returns owner's lane, made on first use (f.mu held).
func (f *fair) lane(owner int) *lane {
	l := f.owners[owner]
	if l == nil {
		l = &lane{started: map[*slot]time.Time{}}
		f.owners[owner] = l
	}
	return l
}

// forget drops an idle lane whose bookings have passed (f.mu held), so
// that the map holds the owners sending now only.
func (f *fair) forget(owner int, l *lane, now time.Time) {
	if l.inFlight == 0 && l.waiting == 0 && !l.booked.After(now) && now.Sub(l.ended) > patience {
		delete(f.owners, owner)
	}
}

// acquire returns a slot for an attempt of owner, waiting while the
// replica is busy (until ctx is done or by) and, while the owner's share
// is in use, for as long as the owner's attempts keep ending (within
// patience of each other). It returns nil when the attempt may not
// start: the caller defers it.
func (f *fair) acquire(ctx context.Context, owner int, by time.Time) *slot {
	f.mu.Lock()
	l := f.lane(owner)
	waiting := false
	defer func() {
		if waiting {
			l.waiting--
		}
		f.forget(owner, l, time.Now())
		f.mu.Unlock()
	}()
	deadline := time.NewTimer(time.Until(by))
	defer deadline.Stop()
	for {
		now := time.Now()
		if l.inFlight < f.share && f.inFlight < f.total {
			s := &slot{f: f, owner: owner}
			l.inFlight++
			f.inFlight++
			l.started[s] = now
			return s
		}
		// The owner's share is in use: wait only while its lane moves
		// and its waiting line is short.
		wait := time.Duration(-1)
		if l.inFlight >= f.share {
			since := now.Sub(l.ended)
			if oldest := l.oldest(now); oldest < since {
				since = oldest
			}
			if !waiting && l.waiting >= f.share || since >= patience {
				return nil
			}
			wait = patience - since
		}
		if !waiting {
			waiting = true
			l.waiting++
		}
		changed := f.changed
		f.mu.Unlock()
		var timeout <-chan time.Time
		if wait >= 0 {
			timeout = time.After(wait)
		}
		select {
		case <-changed:
		case <-timeout:
		case <-ctx.Done():
			f.mu.Lock()
			return nil
		case <-deadline.C:
			f.mu.Lock()
			return nil
		}
		f.mu.Lock()
	}
}

// oldest is the age of the owner's youngest attempt in flight (a large
// value when none is): while it is young the lane may be moving, the
// attempts of a receiver that answers at once being ever young.
func (l *lane) oldest(now time.Time) time.Duration {
	youngest := time.Duration(1<<63 - 1)
	for _, t := range l.started {
		youngest = min(youngest, now.Sub(t))
	}
	return youngest
}

// turn says whether an attempt of owner could start now or soon: the
// owner's share is not all in use, or one of its attempts ended (or
// began) within patience. A batch of the owner's deferred deliveries
// without a turn is snoozed rather than run.
func (f *fair) turn(owner int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.owners[owner]
	if l == nil || l.inFlight < f.share {
		return true
	}
	now := time.Now()
	return now.Sub(l.ended) < patience || l.oldest(now) < patience
}

// release ends the attempt of s, recording how long it took.
func (s *slot) release() {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.owners[s.owner]
	now := time.Now()
	took := now.Sub(l.started[s])
	delete(l.started, s)
	l.inFlight--
	f.inFlight--
	l.ended = now
	if l.pace == 0 {
		l.pace = took
	} else {
		l.pace += (took - l.pace) / 4
	}
	close(f.changed)
	f.changed = make(chan struct{})
	f.forget(s.owner, l, now)
}

// deferral books a later turn for n deliveries of owner that may not start
// now and returns how long they should wait: after the deliveries booked
// before them, n more of the owner's attempts at its pace (its average,
// or the age of its attempts in flight when they have run longer, at
// most AttemptTimeout), shared by its share; at least patience.
func (f *fair) deferral(owner, n int) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if len(f.owners) > 4*f.total {
		// Lanes of owners that sent nothing since their bookings passed.
		for o, l := range f.owners {
			f.forget(o, l, now)
		}
	}
	l := f.lane(owner)
	pace := l.pace
	for _, t := range l.started {
		pace = max(pace, now.Sub(t))
	}
	pace = min(max(pace, time.Millisecond), AttemptTimeout)
	from := now
	if l.booked.After(now) {
		from = l.booked
	}
	l.booked = from.Add(time.Duration(n) * pace / time.Duration(f.share))
	return max(l.booked.Sub(now), patience)
}
