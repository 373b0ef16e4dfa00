// Package buildinfo tells which build of the service is running, from what
// the Go toolchain records in every binary (runtime/debug.ReadBuildInfo),
// so operators can match a running replica, its logs and /healthz to a
// commit without a version file to keep up to date.
package buildinfo

import (
	"cmp"
	"runtime/debug"
)

// Info is what a binary knows of its own build.
type Info struct {
	// Version is the main module's version: a tag (v1.2.3), a
	// pseudo-version derived from the commit (v0.0.0-20261123181500-abcdef123456,
	// +dirty when the tree had changes), or "(devel)" when the build
	// recorded no version control information (go run, -buildvcs=false).
	Version string `json:"version"`
	// Revision is the commit hash, empty without version control
	// information.
	Revision string `json:"revision,omitempty"`
	// Time is the commit's time (RFC 3339), empty without version control
	// information.
	Time string `json:"time,omitempty"`
	// Modified reports whether the working tree had uncommitted changes.
	Modified bool `json:"modified"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go"`
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "unknown"}
	}
	return From(bi)
}

// From extracts Info from a build record; Read passes the running binary's.
func From(bi *debug.BuildInfo) Info {
	info := Info{Version: cmp.Or(bi.Main.Version, "(devel)"), GoVersion: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}
