package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Inside the sandbox the command runs as this unprivileged user. A user
// namespace maps it to brain's own uid outside, or, when brain runs as
// root, to Config.RunAs (see runas.go), so files it writes in /workspace
// belong to that user.
const (
	sandboxID   = 1000
	sandboxUser = "sandbox"
	hostname    = "sandbox"
	workdir     = "/workspace"
)

// env is the whole environment a command sees: nothing of brain's
// environment reaches it.
var env = [][2]string{
	{"PATH", "/usr/local/bin:/usr/bin:/bin"},
	{"HOME", workdir},
	{"LANG", "C.UTF-8"},
}

// topDirs are bound read-only when they are directories, or recreated
// when they are symlinks (usrmerge: /bin -> usr/bin).
var topDirs = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the only host /etc entries a command sees (read-only, when
// present): what dynamic linking, alternatives symlinks, TLS roots and time
// zones need. The rest of /etc (brain's config, ssh host keys, shadow, TLS
// private keys under /etc/ssl/private) stays out.
var etcFiles = []string{
	"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates", "/etc/ca-certificates.conf",
	"/etc/pki/ca-trust", "/etc/pki/tls/certs", "/etc/pki/tls/cert.pem", "/etc/pki/tls/openssl.cnf",
	"/etc/crypto-policies", "/etc/localtime", "/etc/timezone", "/etc/nsswitch.conf",
	"/etc/protocols", "/etc/services", "/etc/mime.types", "/etc/os-release",
}

// netEtcFiles are added when the network is on.
var netEtcFiles = []string{"/etc/resolv.conf", "/etc/gai.conf"}

// features is what this host's bwrap supports, found by probing at New.
type features struct {
	// userNS: a user namespace maps the sandbox user (uid 1000 inside):
	// bwrap's (--unshare-user --uid/--gid), or as root brain's own.
	userNS bool
	// disableUserNS: --disable-userns (bwrap >= 0.8), no nested user
	// namespaces; it needs bwrap's own user namespace, so not as root.
	disableUserNS bool
}

// probeOrder lists feature sets from strongest to weakest; New uses the
// first that runs. As root without a user namespace, setpriv switches to
// RunAs itself.
func (s *Sandboxes) probeOrder() []features {
	if s.cfg.runAs != nil {
		return []features{{userNS: true}, {}}
	}
	return []features{{userNS: true, disableUserNS: true}, {userNS: true}, {}}
}

// The scripts run inside before the command. setupScript runs as root in
// the sandbox (only when brain is root): bwrap made /tmp and /dev/shm as
// that root, so it opens them to the sandbox user. startScript runs as the
// sandbox user: fd 4 gets one byte just before the command starts, which
// tells a setup failure from a command's failure; then the fds are closed.
// Each execs the rest of its arguments.
const (
	setupScript = `chmod 1777 /tmp /dev/shm || exit 1; exec "$@"`
	startScript = `cd /workspace || exit 1; printf x >&4; exec 3>&- 4>&-; exec "$@"`
)

// args builds the bwrap command line that runs command with workspace
// bound at /workspace, in proxy mode the proxy's socket sock, and binds
// read-only. fd 3 receives bwrap's info (the sandbox's pid 1); fd 4
// receives the start byte (see startScript).
func (s *Sandboxes) args(f features, etcDir, workspace, sock, command string, binds ...Bind) []string {
	asRoot := s.cfg.runAs != nil
	var a []string
	if asRoot {
		// Not --unshare-all: it implies bwrap's own user namespace, which
		// would map the sandbox user to root.
		a = append(a, "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try")
		if !s.cfg.Network {
			a = append(a, "--unshare-net")
		}
		// Just what setpriv needs to become the sandbox user and empty the
		// bounding set.
		a = append(a, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP")
	} else {
		a = append(a, "--unshare-all")
		if f.userNS {
			id := strconv.Itoa(sandboxID)
			a = append(a, "--unshare-user", "--uid", id, "--gid", id)
			if f.disableUserNS {
				a = append(a, "--disable-userns")
			}
		}
		if s.cfg.Network {
			a = append(a, "--share-net")
		}
		if os.Geteuid() == 0 {
			a = append(a, "--cap-drop", "ALL")
		}
	}
	a = append(a, "--die-with-parent", "--new-session", "--hostname", hostname, "--clearenv")
	for _, kv := range env {
		a = append(a, "--setenv", kv[0], kv[1])
	}
	if sock != "" {
		for _, kv := range proxyEnv {
			a = append(a, "--setenv", kv[0], kv[1])
		}
	}
	if s.cfg.ModCacheRoot != "" {
		a = append(a, "--setenv", "GOPROXY", modCacheProxy)
	}
	a = append(a, "--ro-bind", "/usr", "/usr")
	for _, d := range topDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/etc")
	etc := etcFiles
	if s.cfg.Network {
		etc = append(append([]string(nil), etc...), netEtcFiles...)
	}
	for _, p := range etc {
		a = append(a, "--ro-bind-try", p, p)
	}
	for _, name := range syntheticEtc {
		a = append(a, "--ro-bind", filepath.Join(etcDir, name), "/etc/"+name)
	}
	if sock != "" {
		// bwrap would make /run/brain root's and 0700 (as root), which
		// the sandbox user could not enter.
		a = append(a, "--perms", "0755", "--dir", "/run", "--perms", "0755", "--dir", "/run/brain",
			"--ro-bind", s.cfg.Egress.Helper, helperPath, "--ro-bind", sock, socketPath,
			"--ro-bind", filepath.Join(etcDir, "gitconfig"), gitconfig)
	}
	made := map[string]bool{}
	for _, b := range binds {
		// bwrap makes a missing mount point's parents 0700, closed to the
		// sandbox user: make them searchable first.
		if parent := filepath.Dir(filepath.Clean(b.Target)); parent != "/" && !made[parent] {
			made[parent] = true
			a = append(a, "--perms", "0755", "--dir", parent)
		}
		a = append(a, "--ro-bind", b.Source, b.Target)
	}
	// bwrap binds every host path nosuid, and nodev unless --dev-bind:
	// /workspace is rw,nosuid,nodev.
	a = append(a, "--bind", workspace, workdir, "--remount-ro", "/", "--info-fd", "3")
	if s.seccomp != nil {
		a = append(a, "--seccomp", "5") // see startProc
	}
	if asRoot {
		uid, gid := s.sandboxIDs(f)
		a = append(a, "/bin/sh", "-c", setupScript, hostname,
			s.setpriv, "--reuid="+strconv.Itoa(uid), "--regid="+strconv.Itoa(gid),
			"--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--")
	}
	a = append(a, "/bin/sh", "-c", startScript, hostname)
	if sock != "" {
		// The forwarder is the command's parent, in its network namespace.
		a = append(a, helperPath, HelperCommand, forwardCmd, "--")
	}
	if rl := s.cfg.rlimits(); len(rl) > 0 {
		a = append(append(append(a, s.prlimit), rl...), "--")
	}
	return append(a, "/bin/sh", "-c", command)
}

// sandboxIDs are the sandbox user's uid and gid as the sandbox sees them.
func (s *Sandboxes) sandboxIDs(f features) (uid, gid int) {
	switch {
	case f.userNS:
		return sandboxID, sandboxID
	case s.cfg.runAs != nil:
		return s.cfg.runAs.uid, s.cfg.runAs.gid
	default:
		return os.Geteuid(), os.Getegid()
	}
}

// syntheticEtc are files brain writes for every sandbox instead of
// exposing the host's: the sandbox user, its group, its host name.
var syntheticEtc = []string{"passwd", "group", "hosts", "hostname"}

func (s *Sandboxes) writeEtc(dir string, f features) error {
	u, g := s.sandboxIDs(f)
	uid, gid := strconv.Itoa(u), strconv.Itoa(g)
	// The sandbox user comes first, so its ids are named for it even when
	// RunAs is nobody's.
	files := map[string]string{
		"passwd": sandboxUser + ":x:" + uid + ":" + gid + ":" + sandboxUser + ":" + workdir + ":/bin/sh\n" +
			"root:x:0:0:root:/root:/bin/sh\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"group":    sandboxUser + ":x:" + gid + ":\nroot:x:0:\nnogroup:x:65534:\n",
		"hosts":    "127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\t" + hostname + "\n",
		"hostname": hostname + "\n",
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, name := range syntheticEtc {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(files[name]), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// installHint is appended to every error that means bwrap cannot be used.
const installHint = "sandbox_exec needs bubblewrap: install the bubblewrap package " +
	"(apt-get install -y bubblewrap, dnf install bubblewrap) and allow unprivileged user " +
	"namespaces (on Ubuntu 24.04: sysctl kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for bwrap)"

// probe finds the strongest feature set this host's bwrap runs, by running
// `true` in a real sandbox of each kind.
func (s *Sandboxes) probe() (features, error) {
	path, err := exec.LookPath(s.cfg.Bwrap)
	if err != nil {
		return features{}, fmt.Errorf("sandbox: bwrap not found (%s): %v; %s", s.cfg.Bwrap, err, installHint)
	}
	s.bwrap = path
	if len(s.cfg.rlimits()) > 0 {
		if s.prlimit, err = toolPath("prlimit"); err != nil {
			return features{}, fmt.Errorf("sandbox: %v: install util-linux, whose prlimit sets the limits max_processes, "+
				"max_memory_bytes, max_cpu_seconds and max_file_bytes (or set each to -1 to turn it off)", err)
		}
	}
	if s.cfg.runAs != nil {
		if s.setpriv, err = toolPath("setpriv"); err != nil {
			return features{}, fmt.Errorf("sandbox: %v: install util-linux, whose setpriv runs commands as run_as "+
				"when brain runs as root", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, path, "--ro-bind", "/", "/", "true").CombinedOutput(); err != nil {
		return features{}, fmt.Errorf("sandbox: %s does not run: %v: %s; %s", path, err, trimOut(out), installHint)
	}
	dir, err := os.MkdirTemp(s.cfg.Root, ".probe-")
	if err != nil {
		return features{}, fmt.Errorf("sandbox: probe: %w", err)
	}
	defer os.RemoveAll(dir)
	var errs []error
	for _, f := range s.probeOrder() {
		etc := filepath.Join(dir, "etc")
		ws := filepath.Join(dir, "workspace")
		if err := s.writeEtc(etc, f); err != nil {
			return features{}, fmt.Errorf("sandbox: probe: %w", err)
		}
		if err := s.makeWorkspace(ws); err != nil {
			return features{}, fmt.Errorf("sandbox: probe: %w", err)
		}
		err := s.tryRun(ctx, f, etc, ws, "")
		if err == nil {
			return f, nil
		}
		errs = append(errs, err)
	}
	return features{}, fmt.Errorf("sandbox: bwrap cannot create a sandbox here: %w; %s", errors.Join(errs...), installHint)
}

// tryRun runs `true` in a sandbox of features f (the probes).
func (s *Sandboxes) tryRun(ctx context.Context, f features, etc, ws, sock string) error {
	cmd := exec.CommandContext(ctx, s.bwrap, s.args(f, etc, ws, sock, "true")...)
	cmd.Env = []string{}
	cmd.SysProcAttr = s.sysProcAttr(f)
	// The probe has no reader for the info and start fds: send them to
	// /dev/null.
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("sandbox: probe: %w", err)
	}
	defer null.Close()
	cmd.ExtraFiles = []*os.File{null, null}
	if s.seccomp != nil {
		filter, err := seccompFile(s.seccomp)
		if err != nil {
			return fmt.Errorf("sandbox: probe: %w", err)
		}
		defer filter.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, filter)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, trimOut(out))
	}
	return nil
}

func trimOut(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return s
}

// toolPath finds a helper binary where the sandbox sees it too: under the
// host's /usr, /bin or /sbin, which are bound at the same paths.
func toolPath(name string) (string, error) {
	for _, dir := range []string{"/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not in /usr/local/bin, /usr/bin, /bin, /usr/sbin or /sbin", name)
}
