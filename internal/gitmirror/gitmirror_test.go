package gitmirror

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"brain/internal/gittest"
)

// TestMirrors_SyncServeEvict: a mirror is made on first sync and served
// read only; the least recently used mirror goes when the budget is
// exceeded, and a repository over the whole budget is not kept.
func TestMirrors_SyncServeEvict(t *testing.T) {
	git := gittest.New(t, "tok_read", "tok_write_0123456789")
	big := map[string]string{"README": "a\n"}
	for i := range 40 {
		big[filepath.Join("data", string(rune('a'+i%26))+strings.Repeat("x", i))] = strings.Repeat(string(rune('A'+i%26)), 4<<10)
	}
	git.Create(t, "acme/one", big)
	git.Create(t, "acme/two", map[string]string{"README": "two\n"})
	m := &Mirrors{Root: t.TempDir()}
	ctx := context.Background()
	if err := m.Sync(ctx, "git.test", "acme/one", git.URL+"/acme/one.git", "x", "tok_read"); err != nil {
		t.Fatal(err)
	}
	if err := m.Sync(ctx, "git.test", "acme/one", git.URL+"/acme/one.git", "x", "bad"); err == nil {
		t.Fatal("a sync with a refused token succeeded")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		repo, service, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), ".git/")
		m.Serve(w, r, "git.test", repo, service)
	}))
	defer srv.Close()
	dst := t.TempDir()
	gittest.Git(t, dst, "clone", "-q", srv.URL+"/acme/one.git", "one")
	if b, err := os.ReadFile(filepath.Join(dst, "one", "README")); err != nil || string(b) != "a\n" {
		t.Fatalf("clone from the mirror: %q %v", b, err)
	}
	if cmdErr := tryPush(dst); cmdErr == nil {
		t.Fatal("a push to the mirror succeeded")
	}

	one, _ := m.Dir("git.test", "acme/one")
	size, _ := (&Mirrors{Root: one}).Size()
	m.MaxBytes = size + 1 // room for one, not two
	if err := m.Sync(ctx, "git.test", "acme/two", git.URL+"/acme/two.git", "x", "tok_read"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(one); !os.IsNotExist(err) {
		t.Fatalf("the least recently used mirror was kept: %v", err)
	}
	m.MaxBytes = 1
	if err := m.Sync(ctx, "git.test", "acme/one", git.URL+"/acme/one.git", "x", "tok_read"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the budget: %v", err)
	}
	if total, _ := m.Size(); total != 0 {
		t.Fatalf("%d bytes kept over the budget", total)
	}
	if _, ok := m.Dir("git.test", "../etc/x"); ok {
		t.Fatal("a path outside the root was accepted")
	}
}

func tryPush(dir string) error {
	cmd := exec.Command("git", "-C", filepath.Join(dir, "one"), "push", "-q", "origin", "HEAD:refs/heads/x")
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	return cmd.Run()
}
