package main

import (
	"crypto/sha256"
	"runtime"
	"sort"
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
	var tries []time.Duration
	for range 5 {
		var a, b syscall.Rusage
		syscall.Getrusage(rusageThread, &a)
		for range 64 {
			sum := sha256.Sum256(buf)
			buf[0] ^= sum[0]
		}
		syscall.Getrusage(rusageThread, &b)
		tries = append(tries, cpuOf(b)-cpuOf(a))
	}
	sort.Slice(tries, func(i, j int) bool { return tries[i] < tries[j] })
	return tries[len(tries)/2]
}

func cpuOf(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
