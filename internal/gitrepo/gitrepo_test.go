package gitrepo

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brain/internal/gittest"
)

// workspace clones repo from srv into a workspace directory, changes a
// file and commits it; it returns the workspace and the new commit.
func workspace(t *testing.T, srv *gittest.Server, repo string) (string, string) {
	t.Helper()
	ws := t.TempDir()
	u := strings.Replace(srv.URL, "http://", "http://x:"+srv.ReadToken+"@", 1) + "/" + repo + ".git"
	gittest.Git(t, ws, "clone", "-q", u, "widgets")
	dir := filepath.Join(ws, "widgets")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(\"fixed\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "commit", "-q", "-am", "Fix the greeting")
	return ws, strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
}

func TestSnapshot_DiffPackAndCreate(t *testing.T) {
	ctx := context.Background()
	srv := gittest.New(t, "read-tok", "write-tok")
	base := srv.Create(t, "acme/widgets", map[string]string{"main.go": "package main\n\nfunc main() { println(\"hi\") }\n", "README.md": "w\n"})
	ws, head := workspace(t, srv, "acme/widgets")

	s, err := Take(ctx, ws, "/workspace/widgets", "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Resolve(ctx, "HEAD"); err != nil || got != head {
		t.Fatalf("HEAD = %q, %v; want %s", got, err, head)
	}
	read := Remote{URL: srv.URL + "/acme/widgets.git", User: "x", Password: "read-tok", Client: http.DefaultClient}
	refs, err := read.Refs(ctx, UploadPack)
	if err != nil || refs["refs/heads/main"] != base {
		t.Fatalf("refs %v, %v; want main at %s", refs, err, base)
	}
	commits, n, err := s.Commits(ctx, base, head, 10)
	if err != nil || n != 1 || commits[0].ID != head || commits[0].Subject != "Fix the greeting" {
		t.Fatalf("commits %+v (%d), %v", commits, n, err)
	}
	files, patch, err := s.Diff(ctx, base, head)
	if err != nil || len(files) != 1 || files[0].Path != "main.go" || files[0].Insertions != 1 || files[0].Deletions != 1 {
		t.Fatalf("files %+v, %v", files, err)
	}
	if !strings.Contains(files[0].Patch, `+func main() { println("fixed") }`) || !strings.Contains(patch, "diff --git a/main.go b/main.go") {
		t.Fatalf("patch %q", files[0].Patch)
	}
	pack, err := s.Pack(ctx, head, []string{base})
	if err != nil || !strings.HasPrefix(string(pack), "PACK") {
		t.Fatalf("pack %.20q, %v", pack, err)
	}

	// A read token cannot push; a write token creates the branch once.
	ref := "refs/heads/brain/dec-1"
	if err := read.Create(ctx, ref, head, pack); err == nil || errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("push with a read token: %v", err)
	}
	write := read
	write.Password = "write-tok"
	if err := write.Create(ctx, ref, head, pack); err != nil {
		t.Fatal(err)
	}
	refs, err = write.Refs(ctx, ReceivePack)
	if err != nil || refs[ref] != head {
		t.Fatalf("after push: %v, %v", refs, err)
	}
	if err := write.Create(ctx, ref, head, pack); err == nil || errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("a second create of the same branch: %v", err)
	}
}

// The workspace is the sandbox's: its config, alternates, replace refs and
// symlinks must not reach brain's git.
func TestSnapshot_IgnoresHostileRepository(t *testing.T) {
	ctx := context.Background()
	srv := gittest.New(t, "read-tok", "write-tok")
	base := srv.Create(t, "acme/widgets", map[string]string{"main.go": "package main\n"})
	ws, head := workspace(t, srv, "acme/widgets")
	dir := filepath.Join(ws, "widgets")
	ran := filepath.Join(t.TempDir(), "ran")
	hostile := "#!/bin/sh\ntouch " + ran + "\n"
	if err := os.WriteFile(filepath.Join(ws, "evil.sh"), []byte(hostile), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "config", "core.fsmonitor", filepath.Join(ws, "evil.sh"))
	gittest.Git(t, dir, "config", "diff.external", filepath.Join(ws, "evil.sh"))
	gittest.Git(t, dir, "config", "core.hooksPath", ws)
	// A replace ref that would show another commit for head.
	gittest.Git(t, dir, "replace", head, base)
	// Alternates to another repository of the host.
	other := t.TempDir()
	gittest.Git(t, other, "init", "-q")
	if err := os.WriteFile(filepath.Join(dir, ".git", "objects", "info", "alternates"), []byte(filepath.Join(other, ".git", "objects")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symlink out of the workspace.
	if err := os.Symlink("/etc", filepath.Join(dir, ".git", "refs", "heads", "etc")); err != nil {
		t.Fatal(err)
	}

	s, err := Take(ctx, ws, "widgets", "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	files, _, err := s.Diff(ctx, base, head)
	if err != nil || len(files) != 1 {
		t.Fatalf("diff %+v, %v", files, err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a program the workspace named ran on the host")
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "objects", "info", "alternates")); err == nil {
		t.Fatal("alternates were copied")
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "refs", "heads", "etc")); err == nil {
		t.Fatal("a symlink was followed out of the workspace")
	}

	// A .git that is a symlink out of the workspace is not followed.
	link := t.TempDir()
	if err := os.MkdirAll(filepath.Join(link, "repo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, ".git"), filepath.Join(link, "repo", ".git")); err != nil {
		t.Fatal(err)
	}
	if _, err := Take(ctx, link, "repo", ""); !errors.Is(err, ErrNotRepository) {
		t.Fatalf("a symlinked .git: %v", err)
	}
	if _, err := Take(ctx, ws, "../..", ""); err == nil {
		t.Fatal("a path out of the workspace was read")
	}
}
