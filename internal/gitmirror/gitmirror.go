// Package gitmirror keeps bare mirrors of git repositories on the host,
// one set per agent, so a second clone of a repository fetches what
// changed instead of copying it all again from the git host. The egress
// proxy updates a mirror (git fetch, with a read token the sandbox never
// sees) when a sandbox starts a clone or fetch, then serves the sandbox
// from it with git's own http-backend, read only: upload-pack, never
// receive-pack. The mirrors' total size is bounded; the least recently
// used go first.
//
// It imports only the standard library.
package gitmirror

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// ErrTooLarge is a repository bigger than the whole budget: it is not
// kept, and the caller serves it from the git host instead.
var ErrTooLarge = errors.New("gitmirror: the repository is larger than the cache's budget")

// usedFile is touched on every use; eviction goes by its time.
const usedFile = "brain-used"

// name is a host or an owner/name part as a directory name.
var name = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// Mirrors is one agent's mirrors under Root: Root/HOST/OWNER/NAME.git.
// Safe for concurrent use; one Mirrors per Root.
type Mirrors struct {
	Root     string
	MaxBytes int64 // the budget of Root; <= 0 means no limit
	// Backend is git-http-backend's path; "" finds it with git --exec-path.
	Backend string

	mu    sync.Mutex
	locks map[string]*sync.RWMutex // by mirror directory
}

// Dir is the mirror directory of repo (owner/name) from host, and ok
// false when either is not a plain name.
func (m *Mirrors) Dir(host, repo string) (string, bool) {
	owner, nm, ok := strings.Cut(strings.ToLower(repo), "/")
	host = strings.ToLower(host)
	if !ok || !name.MatchString(host) || !name.MatchString(owner) || !name.MatchString(nm) || strings.Contains(nm, "/") {
		return "", false
	}
	return filepath.Join(m.Root, host, owner, nm+".git"), true
}

func (m *Mirrors) lock(dir string) *sync.RWMutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks == nil {
		m.locks = map[string]*sync.RWMutex{}
	}
	l, ok := m.locks[dir]
	if !ok {
		l = &sync.RWMutex{}
		m.locks[dir] = l
	}
	return l
}

// Sync brings the mirror of repo up to date with url (the repository's
// smart-HTTP URL on the git host), authenticating as user with token (""
// for none), creating it on first use: a fetch of branches and tags, so
// only what changed is transferred. The token is passed to git in its
// environment, never in arguments or the mirror's config.
func (m *Mirrors) Sync(ctx context.Context, host, repo, url, user, token string) error {
	dir, ok := m.Dir(host, repo)
	if !ok {
		return fmt.Errorf("gitmirror: %s/%s is not a plain repository name", host, repo)
	}
	l := m.lock(dir)
	l.Lock()
	defer l.Unlock()
	env := gitEnv(dir, user, token)
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("gitmirror: %w", err)
		}
		if _, err := run(ctx, env, "init", "-q", "--bare", dir); err != nil {
			return err
		}
	}
	if _, err := run(ctx, env, "--git-dir", dir, "fetch", "-q", "--prune", "--no-write-fetch-head", url,
		"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"); err != nil {
		return err
	}
	// A clone checks out the branch HEAD names: follow the host's.
	if out, err := run(ctx, env, "ls-remote", "--symref", url, "HEAD"); err == nil {
		if ref, ok := strings.CutPrefix(strings.SplitN(out, "\n", 2)[0], "ref: "); ok {
			ref, _, _ = strings.Cut(ref, "\t")
			if strings.HasPrefix(ref, "refs/heads/") {
				_, _ = run(ctx, env, "--git-dir", dir, "symbolic-ref", "HEAD", ref)
			}
		}
	}
	now := time.Now()
	if err := os.WriteFile(filepath.Join(dir, usedFile), nil, 0o644); err == nil {
		_ = os.Chtimes(filepath.Join(dir, usedFile), now, now)
	}
	return m.evict(dir)
}

// gitEnv is git's environment for the mirrors: no user or system config,
// no prompts, and the token as an extra header in the environment.
func gitEnv(dir, user, token string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false"}
	if token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + token))
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Basic "+basic)
	}
	return env
}

func run(ctx context.Context, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("gitmirror: git %s: %v: %s", args[len(args)-1], err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Serve answers a smart-HTTP fetch of repo from its mirror (path is the
// service part: "info/refs" or "git-upload-pack"), holding the mirror
// against eviction meanwhile. Pushes are never served.
func (m *Mirrors) Serve(w http.ResponseWriter, r *http.Request, host, repo, service string) {
	dir, ok := m.Dir(host, repo)
	fetch := service == "git-upload-pack" || service == "info/refs" && r.URL.Query().Get("service") == "git-upload-pack"
	if !ok || !fetch {
		http.Error(w, "not a git fetch", http.StatusForbidden)
		return
	}
	backend := m.Backend
	if backend == "" {
		out, err := exec.Command("git", "--exec-path").Output()
		if err != nil {
			http.Error(w, "git is not installed", http.StatusInternalServerError)
			return
		}
		backend = filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	}
	l := m.lock(dir)
	l.RLock()
	defer l.RUnlock()
	rel, _ := filepath.Rel(m.Root, dir)
	in := r.Clone(r.Context())
	in.URL.Path = "/" + filepath.ToSlash(rel) + "/" + service
	in.URL.RawPath = ""
	in.Header.Del("Authorization")
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + m.Root, "GIT_HTTP_EXPORT_ALL=1",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + dir}}
	h.ServeHTTP(w, in)
}

// Size is the bytes under Root.
func (m *Mirrors) Size() (int64, error) {
	var n int64
	err := filepath.WalkDir(m.Root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}

// evict removes the least recently used mirrors other than keep (and
// those in use) until Root fits its budget; keep alone over the budget is
// removed too and reported as ErrTooLarge.
func (m *Mirrors) evict(keep string) error {
	if m.MaxBytes <= 0 {
		return nil
	}
	total, err := m.Size()
	if err != nil || total <= m.MaxBytes {
		return err
	}
	type mirror struct {
		dir  string
		used time.Time
		size int64
	}
	var all []mirror
	dirs, _ := filepath.Glob(filepath.Join(m.Root, "*", "*", "*.git"))
	for _, d := range dirs {
		if d == keep {
			continue
		}
		fi, err := os.Stat(filepath.Join(d, usedFile))
		var used time.Time
		if err == nil {
			used = fi.ModTime()
		}
		sub := &Mirrors{Root: d}
		size, _ := sub.Size()
		all = append(all, mirror{d, used, size})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used.Before(all[j].used) })
	for _, mr := range all {
		if total <= m.MaxBytes {
			return nil
		}
		l := m.lock(mr.dir)
		if !l.TryLock() {
			continue // serving a clone now
		}
		if os.RemoveAll(mr.dir) == nil {
			total -= mr.size
		}
		l.Unlock()
	}
	if total > m.MaxBytes {
		_ = os.RemoveAll(keep) // the caller holds its lock
		return ErrTooLarge
	}
	return nil
}
