package sandbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The module download cache: each agent has a folder of Go module
// downloads (the GOPROXY layout: module/@v/version.{info,mod,zip}) bound
// read-only at /cache/gomod, first in the sandbox's GOPROXY, so a second
// task's `go` finds its modules there instead of downloading them. After
// each command, the downloads that command's `go` made in the session's
// own module cache are added to it. The sandbox never writes the agent's
// folder, and what it adds is only ever read through go's checks: a
// module from a GOPROXY is verified against go.sum and the checksum
// database before use, so a tampered zip left in a workspace fails
// verification in the next session instead of being trusted. Version
// lists (@v/list) are not kept, so "latest" is always asked of the
// network.

// modCachePath is where the agent's module downloads appear.
const modCachePath = "/cache/gomod"

// modCacheProxy is GOPROXY with the agent's downloads first; a module
// missing there falls through to the next entry.
const modCacheProxy = "file://" + modCachePath + ",https://proxy.golang.org,direct"

// sessionDownloads is the session's own module download cache, relative
// to /workspace (HOME): go's default GOMODCACHE is $HOME/go/pkg/mod.
const sessionDownloads = "go/pkg/mod/cache/download"

// modCacheDir is agent's module download folder, "" without a cache.
func (s *Sandboxes) modCacheDir(agent string) string {
	if s.cfg.ModCacheRoot == "" {
		return ""
	}
	return filepath.Join(s.cfg.ModCacheRoot, dirName(agent))
}

// modCache is the agent's module folder as a bind and what to run after
// the command (adding its downloads); harvest is nil without a cache.
func (s *Sandboxes) modCache(agent, workspace string) (bind Bind, harvest func(), err error) {
	dir := s.modCacheDir(agent)
	if dir == "" {
		return Bind{}, nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Bind{}, nil, err
	}
	return Bind{Source: dir, Target: modCachePath}, func() { _ = harvestModules(workspace, dir, s.cfg.ModCacheBytes) }, nil
}

// harvestModules copies the module downloads of the workspace that the
// agent's folder lacks, while it stays within its budget. It reads the
// workspace through an os.Root and takes regular files only, so nothing
// outside the workspace is copied whatever links the sandbox made.
func harvestModules(workspace, dst string, budget int64) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	if _, err := root.Lstat(sessionDownloads); err != nil {
		return nil // no go download in this session
	}
	used, err := diskUsage(dst)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fs.WalkDir(root.FS(), sessionDownloads, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || path.Base(path.Dir(p)) != "@v" {
			return nil
		}
		switch path.Ext(p) {
		case ".info", ".mod", ".zip":
		default:
			return nil
		}
		target := filepath.Join(dst, filepath.FromSlash(strings.TrimPrefix(p, sessionDownloads+"/")))
		if _, err := os.Stat(target); err == nil {
			return nil
		}
		info, err := d.Info()
		if err != nil || budget > 0 && used+info.Size() > budget {
			return nil
		}
		if err := copyFrom(root, p, target); err != nil {
			return err
		}
		used += info.Size()
		return nil
	})
}

// copyFrom copies name of root to target, whole or not at all.
func copyFrom(root *os.Root, name, target string) error {
	in, err := root.Open(name)
	if err != nil {
		return nil // gone meanwhile
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), ".part-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), target)
}
