package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// When brain runs as root, commands must not: a file a root command leaves
// in /workspace is a root-owned file on the host (a setuid-root shell,
// say). So as root every command runs as an unprivileged host user,
// Config.RunAs, and every workspace belongs to that user.
//
// bwrap cannot do that by itself: it resolves bind sources as the user it
// runs as, and brain's data_dir (0700, root) is not reachable by another
// user, so bwrap must set up the sandbox as root. It then keeps that uid
// for the command. So brain starts bwrap in a user namespace of its own
// (see sysProcAttr) that maps root to root, for bwrap's setup, and the
// sandbox user (uid 1000 inside) to RunAs; bwrap keeps only CAP_SETUID,
// CAP_SETGID and CAP_SETPCAP, and the first thing run inside, setpriv,
// switches to the sandbox user, clearing every capability and the
// bounding set, before the command starts (see Sandboxes.args).

// hostUser is the host uid and gid commands run as when brain is root.
type hostUser struct{ uid, gid int }

// nobodyID is nobody's uid and gid on most systems, used when no nobody
// user is listed.
const nobodyID = 65534

// resolveRunAs returns the user commands run as: nil unless brain runs as
// root, when commands already run as brain's own unprivileged user.
func resolveRunAs(spec string) (*hostUser, error) {
	if os.Geteuid() != 0 {
		if spec != "" {
			return nil, fmt.Errorf("sandbox: run_as %q is set, but brain does not run as root: commands run as brain's own user (uid %d); remove run_as", spec, os.Geteuid())
		}
		return nil, nil
	}
	if spec == "" {
		spec = "nobody"
		if _, err := user.Lookup(spec); err != nil {
			return &hostUser{nobodyID, nobodyID}, nil
		}
	}
	name, group, hasGroup := strings.Cut(spec, ":")
	u, err := lookupUser(name)
	if err != nil {
		return nil, fmt.Errorf("sandbox: run_as %q: %w", spec, err)
	}
	if hasGroup {
		if u.gid, err = lookupGroup(group); err != nil {
			return nil, fmt.Errorf("sandbox: run_as %q: %w", spec, err)
		}
	}
	if u.uid == 0 || u.gid == 0 {
		return nil, fmt.Errorf("sandbox: run_as %q is root (uid or gid 0); name an unprivileged user such as nobody", spec)
	}
	return u, nil
}

// lookupUser resolves a user name or uid. A uid that is not listed gets
// the same number as its gid.
func lookupUser(name string) (*hostUser, error) {
	if id, err := strconv.Atoi(name); err == nil {
		if id < 0 {
			return nil, fmt.Errorf("uid %d is negative", id)
		}
		if u, err := user.LookupId(name); err == nil {
			if gid, err := strconv.Atoi(u.Gid); err == nil {
				return &hostUser{id, gid}, nil
			}
		}
		return &hostUser{id, id}, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user %s: %w", name, err)
	}
	return &hostUser{uid, gid}, nil
}

func lookupGroup(name string) (int, error) {
	if id, err := strconv.Atoi(name); err == nil {
		if id < 0 {
			return 0, fmt.Errorf("gid %d is negative", id)
		}
		return id, nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(g.Gid)
}

// sysProcAttr is how bwrap is started: in its own process group (so the
// whole group can be killed at once), and, as root with a user namespace,
// in a user namespace made by brain that maps root to root (bwrap's setup
// runs as root, so it can reach data_dir) and the sandbox user to RunAs.
func (s *Sandboxes) sysProcAttr(f features) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if s.cfg.runAs != nil && f.userNS {
		a.Cloneflags = syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: sandboxID, HostID: s.cfg.runAs.uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: sandboxID, HostID: s.cfg.runAs.gid, Size: 1}}
		// setpriv --clear-groups calls setgroups, which "deny" would refuse.
		a.GidMappingsEnableSetgroups = true
	}
	return a
}

// makeWorkspace creates a workspace and, as root, gives it and everything
// in it to RunAs. Workspaces of earlier versions were root's, and so may
// be a RunAs change: entries owned by anyone else are chowned (by root,
// which also clears their setuid and setgid bits). Symlinks are not
// followed, and no hard link can lead outside: /workspace is its own bind
// mount, and links across mounts fail.
func (s *Sandboxes) makeWorkspace(ws string) error {
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return err
	}
	u := s.cfg.runAs
	if u == nil {
		return nil
	}
	return filepath.WalkDir(ws, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == u.uid && int(st.Gid) == u.gid {
			return nil
		}
		return os.Lchown(path, u.uid, u.gid)
	})
}
