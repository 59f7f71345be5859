// Package version is the build's version, stamped at link time:
//
//	go build -ldflags "-X github.com/meshcp/meshcp/pkg/version.version=v0.1.0 \
//	  -X github.com/meshcp/meshcp/pkg/version.commit=$(git rev-parse HEAD)"
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the linker; see the package doc.
var (
	version = ""
	commit  = ""
)

// Version returns the stamped version, or "devel" with the module
// version Go recorded (a `go install pkg@version` build has one).
func Version() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// Commit returns the stamped commit, or the VCS revision Go recorded, or "".
func Commit() string {
	if commit != "" {
		return commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return ""
}

// String is one line for --version.
func String() string {
	s := "controlplane " + Version()
	if c := Commit(); c != "" {
		s += " (" + c + ")"
	}
	return fmt.Sprintf("%s %s/%s %s", s, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
