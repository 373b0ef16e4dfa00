package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want Info
	}{
		{"clone with changes", debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Path: "github.com/configurator/catalogue", Version: "v0.0.0-20261123181500-0123456789ab+dirty"},
			Settings: []debug.BuildSetting{
				{Key: "-buildmode", Value: "exe"},
				{Key: "vcs", Value: "git"},
				{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
				{Key: "vcs.time", Value: "2026-11-23T18:15:00Z"},
				{Key: "vcs.modified", Value: "true"},
			},
		}, Info{Version: "v0.0.0-20261123181500-0123456789ab+dirty", Revision: "0123456789abcdef0123456789abcdef01234567",
			Time: "2026-11-23T18:15:00Z", Modified: true, GoVersion: "go1.26.8"}},
		{"tagged release", debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Version: "v1.4.0"},
			Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "fedcba"},
				{Key: "vcs.time", Value: "2026-12-01T00:00:00Z"},
				{Key: "vcs.modified", Value: "false"},
			},
		}, Info{Version: "v1.4.0", Revision: "fedcba", Time: "2026-12-01T00:00:00Z", GoVersion: "go1.26.8"}},
		{"no version control", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			Info{Version: "(devel)", GoVersion: "go1.26.8"}},
		{"no main version", debug.BuildInfo{GoVersion: "go1.26.8"}, Info{Version: "(devel)", GoVersion: "go1.26.8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := From(&tc.bi); got != tc.want {
				t.Errorf("From() = %+v; want %+v", got, tc.want)
			}
		})
	}
}

// TestRead reads the test binary's own record, which Go always writes.
func TestRead(t *testing.T) {
	if got := Read(); got.GoVersion != runtime.Version() || got.Version == "" {
		t.Errorf("Read() = %+v; want this toolchain %s and a version", got, runtime.Version())
	}
}
