package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSandbox_ReadOnlyOutsideWorkspace(t *testing.T) {
	s := newTest(t, Config{})
	for _, path := range []string{"/usr/x", "/x", "/etc/passwd", "/etc/x", "/bin/x"} {
		r := sh(t, s, "ro", "touch "+path)
		if r.ExitCode == 0 {
			t.Errorf("touch %s succeeded", path)
		}
	}
	if r := sh(t, s, "ro", "touch /tmp/x /workspace/x && echo ok"); r.Stdout != "ok\n" {
		t.Errorf("/tmp and /workspace are not writable: %+v", r)
	}
}

func TestSandbox_HostFilesInvisible(t *testing.T) {
	data := t.TempDir() // stands for brain's data_dir
	marker := fmt.Sprintf("brain-secret-%d", time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(data, marker+".db"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newTest(t, Config{Root: filepath.Join(data, "sandboxes")})
	sh(t, s, "other", "touch "+marker+".other")
	if r := sh(t, s, "me", "find / -path /proc -prune -o -name '"+marker+"*' -print 2>/dev/null"); r.Stdout != "" {
		t.Errorf("host files visible: %q", r.Stdout)
	}
	for _, path := range []string{data, s.cfg.Root, "/root", "/home", "/etc/shadow", "/var", "/run", "/sys"} {
		if r := sh(t, s, "me", "ls -d "+path); r.ExitCode == 0 {
			t.Errorf("%s is visible: %+v", path, r)
		}
	}
	if r := sh(t, s, "me", "ls /etc"); strings.Contains(r.Stdout, "shadow") || !strings.Contains(r.Stdout, "passwd") {
		t.Errorf("/etc holds: %q", r.Stdout)
	}
	// The host's processes are not visible either.
	if r := sh(t, s, "me", "ls /proc | grep -c '^[0-9]'"); len(strings.TrimSpace(r.Stdout)) != 1 {
		t.Errorf("more than 9 processes visible in /proc: %q", r.Stdout)
	}
}

func TestSandbox_Environment(t *testing.T) {
	secret := fmt.Sprintf("hunter2-%d", time.Now().UnixNano())
	t.Setenv("BRAIN_TEST_SECRET", secret)
	t.Setenv("ANTHROPIC_API_KEY", secret)
	s := newTest(t, Config{})
	r := sh(t, s, "env", "env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'")
	if strings.Contains(r.Stdout+r.Stderr, secret) || strings.Contains(r.Stdout, "BRAIN_TEST_SECRET") {
		t.Fatalf("brain's environment reached the command:\n%s", r.Stdout)
	}
	for _, want := range []string{"PATH=/usr/local/bin:/usr/bin:/bin\n", "HOME=/workspace\n", "LANG=C.UTF-8\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("env lacks %q:\n%s", want, r.Stdout)
		}
	}
}

func TestSandbox_Network(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for /dev/tcp")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d' && echo connected", port)

	off := newTest(t, Config{})
	if r := sh(t, off, "n", connect); r.ExitCode == 0 || strings.Contains(r.Stdout, "connected") {
		t.Errorf("network off, yet the host's loopback answered: %+v", r)
	}
	if r := sh(t, off, "n", "ls /sys/class/net 2>/dev/null; cat /proc/net/dev"); strings.Contains(r.Stdout, "eth") {
		t.Errorf("host interfaces visible with the network off: %q", r.Stdout)
	}
	on := newTest(t, Config{Network: true})
	if r := sh(t, on, "n", connect); r.ExitCode != 0 || r.Stdout != "connected\n" {
		t.Errorf("network on, yet no connection: %+v", r)
	}
}

// Every feature set New may fall back to must still run commands isolated.
// As root, the layout of an unprivileged brain is tried too.
func TestSandbox_FeatureFallbacks(t *testing.T) {
	s := newTest(t, Config{})
	layouts := []*hostUser{s.cfg.runAs}
	if s.cfg.runAs != nil {
		layouts = append(layouts, nil)
	}
	for i, runAs := range layouts {
		s.cfg.runAs = runAs
		for j, f := range s.probeOrder() {
			s.feat = f
			if err := s.writeEtc(s.etcDir, f); err != nil {
				t.Fatal(err)
			}
			r := sh(t, s, fmt.Sprintf("f%d-%d", i, j), "echo ok > f; cat f; touch /usr/x 2>/dev/null || echo ro; touch /tmp/x && id -un")
			if r.Stdout != "ok\nro\nsandbox\n" {
				t.Errorf("run as %v, %+v: %+v", runAs, f, r)
			}
		}
	}
}

// TestSandbox_NoNestedUserNamespaces (issue 24, finding 11): a command
// cannot create a user namespace, so it cannot gain capabilities over new
// namespaces of its own; as root (where --disable-userns cannot be used)
// and unprivileged alike.
func TestSandbox_NoNestedUserNamespaces(t *testing.T) {
	s := newTest(t, Config{})
	for _, cmd := range []string{"unshare -U true", "unshare -r true", "unshare -U -m true", "unshare -r -n true"} {
		if r := sh(t, s, "ns", cmd+" && echo created"); r.ExitCode == 0 || strings.Contains(r.Stdout, "created") {
			t.Errorf("%s: a nested user namespace was created: %+v", cmd, r)
		}
	}
}

// syscallProbe calls system calls the filter refuses (and one it allows)
// and prints each one's errno, 0 for success.
const syscallProbe = `#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
static char buf[512];
#define TRY(name, call) do { errno = 0; long r = call; printf("%s=%d\n", name, r < 0 ? errno : 0); } while (0)
int main(void) {
	TRY("keyctl", syscall(SYS_keyctl, 0, -3, 0));
	TRY("add_key", syscall(SYS_add_key, "user", "k", "v", 1, -3));
	TRY("io_uring_setup", syscall(425, 1, buf));
	TRY("userfaultfd", syscall(SYS_userfaultfd, 1));
	memset(buf, 0, sizeof buf); buf[4] = 112; /* perf_event_attr.size */
	TRY("perf_event_open", syscall(SYS_perf_event_open, buf, 0, -1, -1, 0));
	TRY("bpf", syscall(SYS_bpf, 0, NULL, 0));
	TRY("unshare", syscall(SYS_unshare, CLONE_NEWUSER));
	TRY("setns", syscall(SYS_setns, -1, 0));
	TRY("mount", syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL));
	TRY("clone3", syscall(435, NULL, 0));
	TRY("getpid", syscall(SYS_getpid));
	return 0;
}
`

// TestSandbox_SeccompRefusesDangerousCalls (issue 24, finding 11): each
// probed call of the filter's list fails with EPERM (clone3 with ENOSYS,
// so the C library falls back to clone), built and run in a real sandbox
// by the host's C compiler; an allowed call still succeeds.
func TestSandbox_SeccompRefusesDangerousCalls(t *testing.T) {
	if seccompProgram() == nil {
		t.Skip("no seccomp filter on this architecture")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("needs a C compiler (cc)")
	}
	s := newTest(t, Config{})
	r := sh(t, s, "sc", "cat > p.c <<'EOF'\n"+syscallProbe+"EOF\ncc -o p p.c && ./p")
	if r.ExitCode != 0 {
		t.Fatalf("probe: %+v", r)
	}
	want := map[string]string{"keyctl": "1", "add_key": "1", "io_uring_setup": "1", "userfaultfd": "1", "perf_event_open": "1",
		"bpf": "1", "unshare": "1", "setns": "1", "mount": "1", "clone3": "38", "getpid": "0"}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if name, errno, ok := strings.Cut(line, "="); ok {
			got[name] = errno
		}
	}
	for name, errno := range want {
		if got[name] != errno {
			t.Errorf("%s: errno %s, want %s (output %q)", name, got[name], errno, r.Stdout)
		}
	}
}

// TestSandbox_OrdinaryCommandsUnderTheFilter: shells, coreutils, git, a C
// compiler (threads included: clone3 falls back to clone) and the go tool
// run as before.
func TestSandbox_OrdinaryCommandsUnderTheFilter(t *testing.T) {
	s := newTest(t, Config{})
	cmds := map[string]string{
		"sh":   "sh -c 'echo ok'",
		"ls":   "ls / >/dev/null && echo ok",
		"find": "find /usr/bin -maxdepth 1 -name sh | head -1 >/dev/null && echo ok",
		"tar":  "mkdir d && echo x > d/f && tar czf d.tgz d && tar tzf d.tgz >/dev/null && echo ok",
	}
	if _, err := exec.LookPath("git"); err == nil {
		cmds["git"] = "git init -q r && cd r && echo x > f && git add f && git -c user.name=a -c user.email=a@x commit -qm m && git log --oneline | wc -l | tr -d ' ' | sed 's/1/ok/'"
	}
	if _, err := exec.LookPath("cc"); err == nil {
		cmds["cc"] = "printf '#include <pthread.h>\\n#include <stdio.h>\\nstatic void *f(void *a){return a;}\\nint main(void){pthread_t t; if(pthread_create(&t,0,f,0))return 1; pthread_join(t,0); puts(\"ok\"); return 0;}\\n' > t.c && cc -pthread -o t t.c && ./t"
	}
	if _, err := os.Stat("/usr/local/go/bin/go"); err == nil {
		cmds["go"] = "/usr/local/go/bin/go version >/dev/null && echo ok"
	}
	for name, cmd := range cmds {
		if r := sh(t, s, "ord-"+name, cmd); r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "ok" {
			t.Errorf("%s: %+v", name, r)
		}
	}
}
