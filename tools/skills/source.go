package skills

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Source is where skills come from: a folder (Dir), or a git repository
// (Git) at a pinned Ref, fetched into the data directory; Path is the
// folder inside the repository that holds the skills ("" = its root).
// Each subfolder of the source's folder that has a SKILL.md is a skill.
type Source struct {
	Name string
	Dir  string
	Git  string
	Ref  string
	Path string
}

// IsGit reports whether the source is a git repository.
func (s Source) IsGit() bool { return s.Git != "" }

// Root is the folder that holds the source's skills: Dir, or for a git
// source the current checkout under dataDir/skills/<name> (a symbolic
// link replaced whole by each sync).
func (s Source) Root(dataDir string) string {
	if !s.IsGit() {
		return s.Dir
	}
	return filepath.Join(checkouts(dataDir, s.Name), "current", filepath.FromSlash(s.Path))
}

// Describe is how people read the source: the folder, or the repository
// (without credentials) and ref.
func (s Source) Describe() string {
	if !s.IsGit() {
		return s.Dir
	}
	return RedactURL(s.Git) + "@" + s.Ref
}

func checkouts(dataDir, name string) string { return filepath.Join(dataDir, "skills", name) }

// Fetched reports the commit of the source's current checkout, or "" when
// it was never fetched.
func (s Source) Fetched(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(checkouts(dataDir, s.Name), "current", ".brain-commit"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Scan lists the skill folders of root: its subfolders that have a
// SKILL.md (or skill.md), in name order.
func Scan(root string) ([]string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read skills folder: %w", err)
	}
	var out []string
	for _, e := range ents {
		dir := filepath.Join(root, e.Name())
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if findFile(dir) != "" {
			out = append(out, dir)
		}
	}
	return out, nil
}

// gitTimeout bounds one sync of one repository.
const gitTimeout = 5 * time.Minute

// Sync fetches the git source at its ref into dataDir/skills/<name>, and,
// when every skill of the new checkout is valid, makes it current; the
// previous checkout stays until the next sync (a running command may
// still read it). On any failure the current checkout is kept and the
// error says so. It returns the commit now current.
func Sync(ctx context.Context, dataDir string, s Source) (string, []Problem, error) {
	if !s.IsGit() {
		return "", nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	base := checkouts(dataDir, s.Name)
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", nil, fmt.Errorf("skills source %s: %w", s.Name, err)
	}
	keep := func(err error) error {
		if c := s.Fetched(dataDir); c != "" {
			return fmt.Errorf("skills source %s: %w; kept the last good copy (commit %.12s)", s.Name, err, c)
		}
		return fmt.Errorf("skills source %s: %w; there is no earlier copy", s.Name, err)
	}
	tmp, err := os.MkdirTemp(base, "fetch-")
	if err != nil {
		return "", nil, keep(err)
	}
	// Readable by the sandbox's user, which sees skill folders read-only.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", nil, keep(err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := git(ctx, "", "clone", "--quiet", "--no-checkout", "--", s.Git, tmp); err != nil {
		return "", nil, keep(err)
	}
	if err := git(ctx, tmp, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", s.Ref, "--"); err != nil {
		return "", nil, keep(fmt.Errorf("ref %q: %w", s.Ref, err))
	}
	commit, err := gitOut(ctx, tmp, "rev-parse", "HEAD")
	if err != nil {
		return "", nil, keep(err)
	}
	if err := os.RemoveAll(filepath.Join(tmp, ".git")); err != nil {
		return "", nil, keep(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".brain-commit"), []byte(commit+"\n"), 0o644); err != nil {
		return "", nil, keep(err)
	}
	root := filepath.Join(tmp, filepath.FromSlash(s.Path))
	dirs, err := Scan(root)
	if err != nil {
		return "", nil, keep(fmt.Errorf("path %q: %w", s.Path, err))
	}
	var probs []Problem
	for _, d := range dirs {
		_, p := Parse(d)
		probs = append(probs, p...)
	}
	if len(probs) > 0 {
		return "", probs, keep(fmt.Errorf("commit %.12s has %d problems", commit, len(probs)))
	}
	if err := swap(base, tmp); err != nil {
		return "", nil, keep(err)
	}
	done = true
	return commit, nil, nil
}

// swap points base/current at dir (a rename, so readers see the old or the
// new checkout, never a mix) and removes checkouts older than the previous.
func swap(base, dir string) error {
	cur := filepath.Join(base, "current")
	prev, _ := os.Readlink(cur)
	link := filepath.Join(base, ".current-new")
	_ = os.Remove(link)
	if err := os.Symlink(filepath.Base(dir), link); err != nil {
		return err
	}
	if err := os.Rename(link, cur); err != nil {
		return err
	}
	ents, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "fetch-") && n != filepath.Base(dir) && n != prev {
			_ = os.RemoveAll(filepath.Join(base, n))
		}
	}
	return nil
}

// gitEnv is git's whole environment: brain's own holds secrets git has
// no use for; an ssh agent's socket is passed for ssh URLs.
func gitEnv() []string {
	env := []string{"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LANG=C"}
	for _, k := range []string{"PATH", "HOME", "SSH_AUTH_SOCK"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// git runs git with no terminal prompts and no system or global config,
// so a sync is the same wherever brain runs.
func git(ctx context.Context, dir string, args ...string) error {
	_, err := gitOut(ctx, dir, args...)
	return err
}

func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 500 {
			msg = msg[:500] + "..."
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], redactText(msg))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(string(out)), nil
}

// RedactURL drops a URL's user information (a token in an https URL).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// redactText removes user information from URLs in git's messages.
func redactText(s string) string {
	fields := strings.Fields(s)
	for _, f := range fields {
		f = strings.Trim(f, "'\"")
		if r := RedactURL(f); r != f {
			s = strings.ReplaceAll(s, f, r)
		}
	}
	return s
}
