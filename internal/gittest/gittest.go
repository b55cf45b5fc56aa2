// Package gittest serves git repositories over the real smart HTTP
// protocol for tests: git's own git-http-backend (CGI) behind an httptest
// server, with GitHub-like basic auth (any user name, a token as password)
// and a read token that cannot push.
//
// It imports only the standard library.
package gittest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Server is a git smart-HTTP server over a directory of bare repositories.
type Server struct {
	*httptest.Server
	Root string // holds owner/name.git

	// ReadToken may fetch; WriteToken may fetch and push.
	ReadToken, WriteToken string

	mu       sync.Mutex
	requests []string // "METHOD path?query auth" of each request, auth = none|read|write|bad
	grants   map[string]grant
}

// grant is a token added with Grant: like GitHub's installation tokens,
// limited to some repositories and to reading or writing their contents.
type grant struct {
	write bool
	repos []string // owner/name; empty = every repository
}

// Grant makes token valid: it may fetch repos (owner/name; none = all),
// and push to them when write is set. A GitHub fake grants the tokens it
// mints, so the git host honours exactly the permissions requested.
func (s *Server) Grant(token string, write bool, repos ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grants == nil {
		s.grants = map[string]grant{}
	}
	s.grants[token] = grant{write: write, repos: repos}
}

// who names the credential of a request: none, read, write or bad (a
// token unknown, or granted for other repositories).
func (s *Server) who(r *http.Request) string {
	_, pass, _ := r.BasicAuth()
	switch {
	case pass == "" && r.Header.Get("Authorization") == "":
		return "none"
	case pass == s.ReadToken:
		return "read"
	case pass == s.WriteToken:
		return "write"
	}
	s.mu.Lock()
	g, ok := s.grants[pass]
	s.mu.Unlock()
	if !ok {
		return "bad"
	}
	if len(g.repos) > 0 {
		path := strings.TrimPrefix(r.URL.Path, "/")
		if !slices.ContainsFunc(g.repos, func(repo string) bool { return strings.HasPrefix(path, repo+".git/") }) {
			return "bad"
		}
	}
	if g.write {
		return "write"
	}
	return "read"
}

// Backend is git-http-backend's path, or "" when git is not installed.
func Backend() string {
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		return ""
	}
	p := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// New starts a server; every repository is private.
func New(t testing.TB, readToken, writeToken string) *Server {
	t.Helper()
	backend := Backend()
	if backend == "" {
		t.Fatal("gittest needs git and its git-http-backend (apt-get install -y git)")
	}
	s := &Server{Root: t.TempDir(), ReadToken: readToken, WriteToken: writeToken}
	h := &cgi.Handler{
		Path: backend,
		Env: []string{"GIT_PROJECT_ROOT=" + s.Root, "GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1", "HOME=" + s.Root},
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := s.who(r)
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI()+" "+who)
		s.mu.Unlock()
		push := strings.HasSuffix(r.URL.Path, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack"
		switch {
		case who == "none" || who == "bad":
			w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		case push && who != "write":
			http.Error(w, "Permission to push denied", http.StatusForbidden)
			return
		}
		hh := *h
		hh.Env = append(append([]string(nil), h.Env...), "REMOTE_USER=x-access-token")
		hh.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns what the server was asked so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Create makes owner/name.git from the files given (path -> content), one
// commit on main, and returns the commit id.
func (s *Server) Create(t testing.TB, repo string, files map[string]string) string {
	t.Helper()
	work := t.TempDir()
	for p, c := range files {
		full := filepath.Join(work, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, work, "init", "-q", "-b", "main")
	Git(t, work, "add", "-A")
	Git(t, work, "commit", "-q", "-m", "initial")
	bare := filepath.Join(s.Root, repo+".git")
	Git(t, "", "clone", "-q", "--bare", work, bare)
	Git(t, bare, "config", "http.receivepack", "true")
	return strings.TrimSpace(Git(t, work, "rev-parse", "HEAD"))
}

// Git runs git in dir with a fixed identity and no user or system config.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
