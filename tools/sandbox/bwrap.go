package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Inside the sandbox the command runs as this unprivileged user, mapped to
// brain's own uid outside (a user namespace), so files it writes in
// /workspace belong to brain.
const (
	sandboxUID  = "1000"
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
	userNS        bool // explicit user namespace with --uid/--gid mapping
	disableUserNS bool // --disable-userns (bwrap >= 0.8): no nested user namespaces
}

// probeOrder lists feature sets from strongest to weakest; New uses the
// first that runs.
var probeOrder = []features{{userNS: true, disableUserNS: true}, {userNS: true}, {}}

// args builds the bwrap command line that runs command with workspace
// bound at /workspace. fd 3 receives bwrap's info (the sandbox's pid 1);
// fd 4 receives one byte once the sandbox is set up, just before the
// command starts, which tells a setup failure from a command's failure.
func (s *Sandboxes) args(f features, etcDir, workspace, command string) []string {
	a := []string{"--unshare-all"}
	if f.userNS {
		a = append(a, "--unshare-user", "--uid", sandboxUID, "--gid", sandboxUID)
		if f.disableUserNS {
			a = append(a, "--disable-userns")
		}
	}
	if s.cfg.Network {
		a = append(a, "--share-net")
	}
	a = append(a, "--die-with-parent", "--new-session", "--hostname", hostname, "--clearenv")
	if os.Geteuid() == 0 {
		a = append(a, "--cap-drop", "ALL")
	}
	for _, kv := range env {
		a = append(a, "--setenv", kv[0], kv[1])
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
	a = append(a,
		"--bind", workspace, workdir, "--chdir", workdir,
		"--remount-ro", "/",
		"--info-fd", "3",
		"/bin/sh", "-c", `printf x >&4; exec 3>&- 4>&-; exec /bin/sh -c "$1"`, hostname, command)
	return a
}

// syntheticEtc are files brain writes for every sandbox instead of
// exposing the host's: the sandbox user, its group, its host name.
var syntheticEtc = []string{"passwd", "group", "hosts", "hostname"}

func writeEtc(dir string, f features) error {
	uid := sandboxUID
	if !f.userNS {
		uid = fmt.Sprint(os.Geteuid())
	}
	files := map[string]string{
		"passwd": "root:x:0:0:root:/root:/bin/sh\n" +
			sandboxUser + ":x:" + uid + ":" + uid + ":" + sandboxUser + ":" + workdir + ":/bin/sh\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"group":    "root:x:0:\n" + sandboxUser + ":x:" + uid + ":\nnogroup:x:65534:\n",
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
	for _, f := range probeOrder {
		etc := filepath.Join(dir, "etc")
		ws := filepath.Join(dir, "workspace")
		if err := writeEtc(etc, f); err != nil {
			return features{}, fmt.Errorf("sandbox: probe: %w", err)
		}
		if err := os.MkdirAll(ws, 0o700); err != nil {
			return features{}, fmt.Errorf("sandbox: probe: %w", err)
		}
		cmd := exec.CommandContext(ctx, path, s.args(f, etc, ws, "true")...)
		cmd.Env = []string{}
		// The probe has no reader for the info and start fds: send them to
		// /dev/null.
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return features{}, fmt.Errorf("sandbox: probe: %w", err)
		}
		cmd.ExtraFiles = []*os.File{null, null}
		out, err := cmd.CombinedOutput()
		null.Close()
		if err == nil {
			return f, nil
		}
		errs = append(errs, fmt.Errorf("%v: %s", err, trimOut(out)))
	}
	return features{}, fmt.Errorf("sandbox: bwrap cannot create a sandbox here: %w; %s", errors.Join(errs...), installHint)
}

func trimOut(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return s
}
