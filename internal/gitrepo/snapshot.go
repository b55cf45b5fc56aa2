// Package gitrepo reads a git repository that someone else controls (a
// sandbox's workspace) without trusting it, and pushes commits from it
// over git's smart HTTP protocol.
//
// Running git on an untrusted repository is unsafe: its config can name
// programs git runs (core.fsmonitor, diff drivers, hooks), its alternates
// can point at other repositories on the host, and its replace refs can
// change what a commit id shows. So nothing here runs git in the
// repository. Snapshot copies only its object database and branch refs,
// through an os.Root (no symlink leaves the repository), into a fresh
// bare repository of brain's own, and every git command runs there with
// no user, system or repository config of the workspace's. Object ids are
// hashes of their content: a commit read from the copy is the commit the
// workspace made.
//
// It imports only the standard library.
package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// MaxCopyBytes bounds what a snapshot copies: a workspace is bounded by its
// budget, but a bound here keeps a preview from filling brain's disk.
const MaxCopyBytes = 4 << 30

// Snapshot is a private bare copy of a workspace repository's objects and
// refs. Close removes it.
type Snapshot struct {
	dir string
}

// ErrNotRepository is returned when the path holds no plain git repository.
var ErrNotRepository = errors.New("not a git repository")

// commitID is a full object id (SHA-1 or SHA-256).
var commitID = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// IsCommitID reports whether s is a full, lower-case object id.
func IsCommitID(s string) bool { return commitID.MatchString(s) }

// Take copies the repository at rel (a path inside root, the workspace's
// directory on the host) into a new snapshot under tmp ("" means the
// system's). rel may name the work tree (its .git is used) or a bare
// repository.
func Take(ctx context.Context, root, rel, tmp string) (*Snapshot, error) {
	rel = path.Clean("/" + filepath.ToSlash(rel))
	rel = strings.TrimPrefix(rel, "/workspace") // the sandbox's name for root
	rel = strings.TrimPrefix(rel, "/")
	if rel == "" {
		rel = "."
	}
	ws, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open the workspace: %w", err)
	}
	defer ws.Close()
	gitDir := path.Join(rel, ".git")
	if fi, err := ws.Lstat(gitDir); err != nil || !fi.IsDir() {
		gitDir = rel // a bare repository, or nothing
	}
	if fi, err := ws.Lstat(path.Join(gitDir, "objects")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w (no .git directory with objects; a .git file pointing elsewhere is not followed)", rel, ErrNotRepository)
	}
	repo, err := ws.OpenRoot(gitDir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	defer repo.Close()

	dir, err := os.MkdirTemp(tmp, "brain-git-")
	if err != nil {
		return nil, err
	}
	s := &Snapshot{dir: dir}
	if _, err := s.git(ctx, nil, "init", "-q", "--bare", dir); err != nil {
		s.Close()
		return nil, err
	}
	budget := int64(MaxCopyBytes)
	// Objects, but not objects/info: alternates there would make git read
	// other repositories of the host.
	if err := copyTree(repo.FS(), "objects", dir, &budget, func(p string) bool { return p == "objects/info" }); err != nil {
		s.Close()
		return nil, fmt.Errorf("copy the objects of %s: %w", rel, err)
	}
	for _, p := range []string{"HEAD", "packed-refs"} {
		if err := copyFile(repo.FS(), p, filepath.Join(dir, p), &budget); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.Close()
			return nil, fmt.Errorf("copy %s of %s: %w", p, rel, err)
		}
	}
	// Branches and remote-tracking branches only: replace refs and the
	// like would change what git shows for a commit id.
	for _, p := range []string{"refs/heads", "refs/remotes"} {
		if err := copyTree(repo.FS(), p, dir, &budget, nil); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.Close()
			return nil, fmt.Errorf("copy %s of %s: %w", p, rel, err)
		}
	}
	return s, nil
}

// Close removes the snapshot.
func (s *Snapshot) Close() error { return os.RemoveAll(s.dir) }

// Dir is the snapshot's bare repository.
func (s *Snapshot) Dir() string { return s.dir }

func copyTree(src fs.FS, top, dst string, budget *int64, skip func(string) bool) error {
	return fs.WalkDir(src, top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip != nil && skip(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case d.Type().IsRegular():
			return copyFile(src, p, target, budget)
		default:
			return nil // symlinks and devices: git writes none in objects or refs
		}
	})
}

func copyFile(src fs.FS, p, target string, budget *int64) error {
	in, err := src.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", p)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(in, *budget+1))
	*budget -= n
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && *budget < 0 {
		err = fmt.Errorf("the repository is over %d bytes", int64(MaxCopyBytes))
	}
	return err
}

// git runs git in the snapshot with no configuration but its own.
func (s *Snapshot) git(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = []string{
		"GIT_DIR=" + s.dir, "HOME=" + s.dir, "PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
	}
	cmd.Dir = s.dir
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 500 {
			msg = msg[:500] + "..."
		}
		return nil, fmt.Errorf("git %s: %v: %s", args[0], err, msg)
	}
	return out.Bytes(), nil
}
