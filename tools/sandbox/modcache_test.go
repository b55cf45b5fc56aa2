package sandbox

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeProxy writes module example.com/dep v1.0.0 in the GOPROXY layout
// under dir.
func writeProxy(t testing.TB, dir string) {
	t.Helper()
	v := filepath.Join(dir, "example.com", "dep", "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/dep\n\ngo 1.21\n"
	files := map[string]string{
		"v1.0.0.info": `{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`,
		"v1.0.0.mod":  mod,
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(v, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(v, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for n, c := range map[string]string{"go.mod": mod, "dep.go": "package dep\n\nfunc Two() int { return 2 }\n"} {
		w, _ := zw.Create("example.com/dep@v1.0.0/" + n)
		_, _ = w.Write([]byte(c))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestModuleCache: a module one session downloaded is in the agent's
// cache, read-only, and a second session's go finds it there with no
// network; a link to a host file left among the downloads is not copied.
func TestModuleCache(t *testing.T) {
	goBin := "/usr/local/go/bin/go"
	if _, err := os.Stat(goBin); err != nil {
		t.Skip("no Go toolchain under /usr/local/go")
	}
	cache := t.TempDir()
	s := newTest(t, Config{ModCacheRoot: cache, ModCacheBytes: 1 << 20})
	// Session 1 downloads from a proxy in its own workspace.
	ws1 := WorkspaceDir(s.cfg.Root, "s1")
	sh(t, s, "s1", "true") // makes the workspace
	writeProxy(t, filepath.Join(ws1, "proxy"))
	env := "export GOTOOLCHAIN=local GOSUMDB=off GOFLAGS=-modcacherw; "
	r := sh(t, s, "s1", env+"GOPROXY=file:///workspace/proxy "+goBin+" mod download example.com/dep@v1.0.0 && "+
		"mkdir -p go/pkg/mod/cache/download/evil/@v && ln -s /etc/hostname go/pkg/mod/cache/download/evil/@v/v1.0.0.mod")
	if r.ExitCode != 0 {
		t.Fatalf("download: %+v", r)
	}
	agentDir := s.modCacheDir("")
	if _, err := os.Stat(filepath.Join(agentDir, "example.com", "dep", "@v", "v1.0.0.zip")); err != nil {
		t.Fatalf("not harvested: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(agentDir, "evil")); err == nil {
		t.Fatal("a link out of the workspace was harvested")
	}
	// Session 2 has no network and no proxy of its own.
	r = sh(t, s, "s2", env+"touch /cache/gomod/x 2>/dev/null && echo wrote; "+goBin+" mod download -json example.com/dep@v1.0.0 | grep -c '\"Zip\"'")
	if r.ExitCode != 0 || strings.Contains(r.Stdout, "wrote") || strings.TrimSpace(r.Stdout) != "1" {
		t.Fatalf("second session: %+v", r)
	}
}
