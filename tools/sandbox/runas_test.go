package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func owner(t *testing.T, path string) (uid, gid int, mode os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid), fi.Mode()
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs brain to run as root")
	}
}

// /workspace is mounted nosuid and nodev: a setuid file there gives
// nothing, whoever owns it.
func TestSandbox_WorkspaceIsNosuidNodev(t *testing.T) {
	s := newTest(t, Config{})
	r := sh(t, s, "m", "awk '$5 == \"/workspace\" { print $6 }' /proc/self/mountinfo")
	opts := strings.Split(strings.TrimSpace(r.Stdout), ",")
	has := map[string]bool{}
	for _, o := range opts {
		has[o] = true
	}
	if !has["rw"] || !has["nosuid"] || !has["nodev"] {
		t.Fatalf("/workspace mount options: %q", r.Stdout)
	}
}

// As root, what a command leaves in /workspace belongs to RunAs on the
// host, never to root, setuid bit or not.
func TestSandbox_RootRunsCommandsAsRunAs(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		runAs    string
		uid, gid int
	}{
		{"", nobodyID, nobodyID},
		{"12345:23456", 12345, 23456},
	} {
		s := newTest(t, Config{RunAs: tc.runAs})
		if s.cfg.runAs == nil || s.cfg.runAs.uid != tc.uid || s.cfg.runAs.gid != tc.gid {
			t.Fatalf("run_as %q resolved to %+v", tc.runAs, s.cfg.runAs)
		}
		r := sh(t, s, "suid", "cp /bin/sh ./x && chmod u+s ./x && mkdir d && touch d/f && ./x -c 'id -u'; id -u; id -un")
		if r.ExitCode != 0 || r.Stdout != "1000\n1000\nsandbox\n" {
			t.Fatalf("run_as %q: %+v", tc.runAs, r)
		}
		ws := filepath.Join(s.cfg.Root, "suid", "workspace")
		for _, p := range []string{ws, filepath.Join(ws, "x"), filepath.Join(ws, "d"), filepath.Join(ws, "d", "f")} {
			if uid, gid, _ := owner(t, p); uid != tc.uid || gid != tc.gid {
				t.Errorf("run_as %q: %s belongs to %d:%d on the host", tc.runAs, p, uid, gid)
			}
		}
		if _, _, mode := owner(t, filepath.Join(ws, "x")); mode&os.ModeSetuid == 0 {
			t.Errorf("the setuid bit did not stick (%v): the test proves nothing", mode)
		}
		// The bounding set is empty and no capability is left.
		r = sh(t, s, "suid", "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status | awk '{print $2}' | sort -u")
		if r.Stdout != "0000000000000000\n" {
			t.Errorf("run_as %q: capabilities left: %q", tc.runAs, r.Stdout)
		}
	}
}

// Workspaces of earlier versions were root's: they are handed to RunAs,
// which clears setuid bits, without following symlinks out.
func TestSandbox_RootChownsOldWorkspaces(t *testing.T) {
	needRoot(t)
	root := filepath.Join(t.TempDir(), "sandboxes")
	ws := filepath.Join(root, "old", "workspace")
	if err := os.MkdirAll(filepath.Join(ws, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws, "d", "suid")
	if err := os.WriteFile(file, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	s := newTest(t, Config{Root: root})
	if r := sh(t, s, "old", "echo more >> d/suid && echo ok"); r.Stdout != "ok\n" {
		t.Fatalf("the old workspace is not writable: %+v", r)
	}
	for _, p := range []string{ws, filepath.Join(ws, "d"), file, filepath.Join(ws, "link")} {
		if uid, _, _ := owner(t, p); uid != nobodyID {
			t.Errorf("%s belongs to %d", p, uid)
		}
	}
	if _, _, mode := owner(t, file); mode&os.ModeSetuid != 0 {
		t.Errorf("setuid bit kept: %v", mode)
	}
	if uid, _, _ := owner(t, outside); uid != 0 {
		t.Errorf("the symlink was followed: %s belongs to %d", outside, uid)
	}
}

func TestResolveRunAs(t *testing.T) {
	if os.Geteuid() != 0 {
		if u, err := resolveRunAs(""); u != nil || err != nil {
			t.Fatalf("not root: %+v, %v", u, err)
		}
		if _, err := resolveRunAs("nobody"); err == nil || !strings.Contains(err.Error(), "does not run as root") {
			t.Fatalf("run_as while not root: %v", err)
		}
		return
	}
	for _, tc := range []struct {
		spec     string
		uid, gid int
		err      string
	}{
		{spec: "", uid: nobodyID, gid: nobodyID},
		{spec: "nobody", uid: nobodyID, gid: nobodyID},
		{spec: "54321", uid: 54321, gid: 54321},
		{spec: "54321:100", uid: 54321, gid: 100},
		{spec: "0", err: "is root"},
		{spec: "54321:0", err: "is root"},
		{spec: "root", err: "is root"},
		{spec: "-3", err: "negative"},
		{spec: "no-such-user-here", err: "no-such-user-here"},
	} {
		u, err := resolveRunAs(tc.spec)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %+v, %v; want an error with %q", tc.spec, u, err, tc.err)
			}
		case err != nil || u.uid != tc.uid || u.gid != tc.gid:
			t.Errorf("%q: got %+v, %v; want %d:%d", tc.spec, u, err, tc.uid, tc.gid)
		}
	}
}
