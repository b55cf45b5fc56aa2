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
