package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Set at build time: go build -ldflags "-X main.version=v1.2.3 -X
// main.commit=abc1234 -X main.date=2026-12-01T09:00:00Z" (make build and
// make release do it). Without them the module's VCS stamp is used.
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// printVersion prints version, commit, build date and Go version.
func printVersion(w io.Writer) {
	c, d, dirty := commit, date, false
	if info, ok := debug.ReadBuildInfo(); ok && (c == "" || d == "") {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if c == "" {
					c = s.Value
				}
			case "vcs.time":
				if d == "" {
					d = s.Value
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if c == "" {
		c = "unknown"
	} else if dirty && commit == "" {
		c += "-dirty"
	}
	if d == "" {
		d = "unknown"
	}
	fmt.Fprintf(w, "brain %s\ncommit: %s\nbuilt: %s\ngo: %s %s/%s\n", version, c, d, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
