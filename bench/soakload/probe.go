package main

import (
	"crypto/sha256"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's CPU time.
const rusageThread = 1

// probeMachine is the CPU time one thread of this process needs for a
// fixed piece of work (SHA-256 over a 1 MiB buffer, 64 times: no memory
// beyond the core's caches, no system calls), the median of five tries.
// It is the soak's control: the work never changes, so if it costs more
// at the end than after the warm-up, the machine got slower (a hypervisor
// that takes the virtual CPUs away without reporting steal makes every
// process's CPU time a request grow alike), and W2's cost at the end is
// read against it; a W2 that costs more while the probe does not is the
// service's.
func probeMachine() time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	return medianCPU(func() {
		for range 64 {
			sum := sha256.Sum256(buf)
			buf[0] ^= sum[0]
		}
	})
}

// medianCPU is the median of five runs of work in the calling thread's CPU
// time (the caller has locked its thread).
func medianCPU(work func()) time.Duration {
	var tries []time.Duration
	for range 5 {
		var a, b syscall.Rusage
		syscall.Getrusage(rusageThread, &a)
		work()
		syscall.Getrusage(rusageThread, &b)
		tries = append(tries, cpuOf(b)-cpuOf(a))
	}
	sort.Slice(tries, func(i, j int) bool { return tries[i] < tries[j] })
	return tries[len(tries)/2]
}

// chaseLen is the memory probe's buffer: 16 Mi entries of 8 bytes, 128
// MiB, larger than any last-level cache this VM has.
const chaseLen = 16 << 20

// chase is one random cycle through all of its entries (Sattolo's
// shuffle), made once.
var chase = sync.OnceValue(func() []uint64 {
	next := make([]uint64, chaseLen)
	for i := range next {
		next[i] = uint64(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := chaseLen - 1; i > 0; i-- {
		j := r.IntN(i)
		next[i], next[j] = next[j], next[i]
	}
	return next
})

// probeMemory is the CPU time one thread needs to follow 512 Ki links of a
// random cycle through 128 MiB (each step a read the caches miss: it
// waits on the last-level cache and memory), the median of five tries.
// It is the second control, beside probeMachine's work that stays in the
// core's caches: a W2 whose every function costs more while probeMachine
// does not, and probeMemory does too, waits on a memory system that other
// processes (PostgreSQL's working set, other VMs) share.
func probeMemory() time.Duration {
	next := chase()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var at uint64
	d := medianCPU(func() {
		for range 512 << 10 {
			at = next[at]
		}
	})
	sink = at
	return d
}

// sink keeps the chase's result, so that the loop is not removed.
var sink uint64

func cpuOf(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
