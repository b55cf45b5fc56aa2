// Package skillstest builds skill folders and local git repositories of
// skills for tests (no network: file:// URLs).
package skillstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Write writes files (relative path -> content) under dir.
func Write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Repo is a bare repository and a work tree that pushes to it.
type Repo struct {
	t    testing.TB
	Bare string // clone from "file://" + Bare
	Work string
}

// NewRepo makes a bare repository with branch main and a work tree.
func NewRepo(t testing.TB) *Repo {
	t.Helper()
	dir := t.TempDir()
	r := &Repo{t: t, Bare: filepath.Join(dir, "skills.git"), Work: filepath.Join(dir, "work")}
	r.git("", "init", "--quiet", "--bare", "--initial-branch=main", r.Bare)
	r.git("", "init", "--quiet", "--initial-branch=main", r.Work)
	r.git(r.Work, "remote", "add", "origin", r.Bare)
	return r
}

// URL is the repository's file:// URL.
func (r *Repo) URL() string { return "file://" + r.Bare }

// Commit writes files into the work tree, commits and pushes them, and
// returns the commit.
func (r *Repo) Commit(files map[string]string, msg string) string {
	r.t.Helper()
	Write(r.t, r.Work, files)
	r.git(r.Work, "add", "-A")
	r.git(r.Work, "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "--quiet", "-m", msg)
	r.git(r.Work, "push", "--quiet", "origin", "main")
	return r.git(r.Work, "rev-parse", "HEAD")
}

// Tag tags the work tree's HEAD and pushes the tag.
func (r *Repo) Tag(name string) {
	r.t.Helper()
	r.git(r.Work, "tag", name)
	r.git(r.Work, "push", "--quiet", "origin", name)
}

func (r *Repo) git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	s := string(out)
	for len(s) > 0 && (s[len(s)-1] == '\n') {
		s = s[:len(s)-1]
	}
	return s
}
