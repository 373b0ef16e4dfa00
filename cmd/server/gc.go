package main

import (
	"runtime"
	"runtime/debug"

	"github.com/configurator/catalogue/internal/config"
)

// Garbage collector defaults of serve, used when neither GOGC nor
// GOMEMLIMIT is set. The live heap of the service is small (a few MB of
// caches and in-flight requests) while every request allocates its rows
// and answer, so with Go's default (collect when the heap doubles) the
// collector ran several hundred times a second under load and took a
// tenth of the CPU. Letting the heap grow to five times the live data
// before collecting cuts that to a fraction; the soft memory limit keeps
// the heap within a small, fixed footprint whatever the load (the
// collector works harder as the heap nears it), so peak RSS stays about
// 100 MB (92-105 MB over compare.sh's runs). Either variable, when set,
// takes over as Go documents it.
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 48 << 20
)

// tuneRuntime applies the collector's defaults above unless the operator
// set GOGC or GOMEMLIMIT, and turns the heap profile's sampling off when
// no profile can be read (pprof is off): by default the runtime records
// the stack of an allocation every 512 KB, about 2% of the CPU of a read
// under load, for a profile only PPROF_ADDR serves.
func tuneRuntime(env config.Env, pprof bool) {
	if !pprof {
		runtime.MemProfileRate = 0
	}
	if env("GOGC") != "" || env("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(defaultGCPercent)
	debug.SetMemoryLimit(defaultMemoryLimit)
}
