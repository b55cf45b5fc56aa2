package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brain/internal/gittest"
)

// TestEgress_RepositoryCache: with a repository cache, a clone is served
// from the agent's mirror, which the proxy fetches up to date from the
// git host first: a second session's clone is served from it, a commit
// pushed to the host meanwhile is there, the token is in neither the
// mirror nor the sandbox, and a push or another repository is still
// refused.
func TestEgress_RepositoryCache(t *testing.T) {
	root := t.TempDir()
	rig := newEgressRigWith(t, func(e *Egress) { e.MirrorRoot, e.MirrorBytes = root, 64<<20 })
	clone := "git clone -q https://github.test/acme/app.git && git -C app log --oneline | wc -l"
	if r := sh(t, rig.s, "s1", clone); r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "1" {
		t.Fatalf("first clone: %+v", r)
	}
	mirrors, _ := filepath.Glob(filepath.Join(root, "*", "github.test", "acme", "app.git"))
	if len(mirrors) != 1 {
		t.Fatalf("mirrors %v", mirrors)
	}
	mirror := mirrors[0]

	// A new commit on the host: the next clone fetches it into the mirror.
	up := t.TempDir()
	gittest.Git(t, up, "clone", "-q", filepath.Join(rig.git.Root, "acme/app.git"), "w")
	if err := os.WriteFile(filepath.Join(up, "w", "NEW"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, filepath.Join(up, "w"), "add", "NEW")
	gittest.Git(t, filepath.Join(up, "w"), "commit", "-qm", "new")
	gittest.Git(t, filepath.Join(up, "w"), "push", "-q", "origin", "main")
	before := len(rig.git.Requests())
	if r := sh(t, rig.s, "s2", clone+" && cat app/NEW"); r.ExitCode != 0 || r.Stdout != "2\nx" {
		t.Fatalf("second clone: %+v", r)
	}
	for _, q := range rig.git.Requests()[before:] {
		if !strings.HasSuffix(q, " read") {
			t.Errorf("the git host saw %q", q)
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(mirror, "config"))
	if strings.Contains(string(cfg), rig.git.ReadToken) || strings.Contains(string(cfg), "extraHeader") {
		t.Fatalf("the mirror's config holds the credential:\n%s", cfg)
	}
	r := sh(t, rig.s, "s2", "cd app && echo y > y && git add y && git -c user.name=a -c user.email=a@x commit -qm y && git push origin HEAD:refs/heads/evil; "+
		"git clone -q https://github.test/acme/other.git; grep -rs '"+rig.git.ReadToken+"' /workspace; true")
	if strings.Contains(r.Stdout+r.Stderr, rig.git.ReadToken) || !strings.Contains(r.Stderr, "not allowed from the sandbox") {
		t.Fatalf("push or other repository: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(rig.git.Root, "acme/app.git/refs/heads/evil")); err == nil {
		t.Fatal("a push reached the host")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(mirror)), "other.git")); err == nil {
		t.Fatal("a repository off the allow-list was mirrored")
	}
}
