package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Bind is a host folder (Source) a command sees read-only at Target.
type Bind struct {
	Source string
	Target string
}

// checkBinds refuses binds that would shadow the sandbox's own folders.
func checkBinds(binds []Bind) error {
	for _, b := range binds {
		t := filepath.Clean(b.Target)
		if !filepath.IsAbs(b.Source) || !filepath.IsAbs(t) || t == "/" {
			return fmt.Errorf("bind %s at %s: want absolute paths", b.Source, b.Target)
		}
		top := strings.SplitN(strings.TrimPrefix(t, "/"), "/", 2)[0]
		switch top {
		case "workspace", "tmp", "proc", "dev", "etc", "usr", "bin", "lib", "lib64", "sbin":
			return fmt.Errorf("bind %s at %s: /%s is the sandbox's own", b.Source, b.Target, top)
		}
	}
	return nil
}
