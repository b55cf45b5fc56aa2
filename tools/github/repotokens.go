package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v62/github"

	"brain/internal/egress"
)

// RepoTokens hands out tokens scoped to one repository for git: read
// tokens for the sandbox's egress proxy (it implements
// egress.Credentials). With a GitHub App each is an installation token
// limited to that repository and contents:read; with a personal access
// token it is that token (GitHub cannot narrow it), which is why the proxy,
// not the sandbox, holds it. A person's connection can implement the same
// interface later.
type RepoTokens struct {
	repos  allowList
	static string
	app    *appTokens
	now    func() time.Time

	mu    sync.Mutex
	cache map[string]scopedToken // by permission and repository
}

type scopedToken struct {
	tok     string
	expires time.Time
}

var _ egress.Credentials = (*RepoTokens)(nil)

// NewRepoTokens checks cfg as Tools does and returns its token broker.
func NewRepoTokens(cfg Config) (*RepoTokens, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	if c.tokens.static == "" && c.tokens.app == nil {
		return nil, errors.New("github: no credential to broker")
	}
	return c.tokens, nil
}

// AllowedRepo reports whether repo (owner/name) is on the allow-list.
func (t *RepoTokens) AllowedRepo(repo string) bool {
	owner, name, ok := strings.Cut(repo, "/")
	return ok && ownerPattern.MatchString(owner) && namePattern.MatchString(name) && t.repos.allows(repo)
}

// WriteToken returns a token that writes the contents of repo (pushes).
// Only brain's apply of an approved change asks for one; the sandbox's
// proxy never does.
func (t *RepoTokens) WriteToken(ctx context.Context, repo string) (string, error) {
	return t.scoped(ctx, repo, "write")
}

// ReadToken returns a token that reads req.Repo.
func (t *RepoTokens) ReadToken(ctx context.Context, req egress.TokenRequest) (string, error) {
	return t.scoped(ctx, req.Repo, "read")
}

// scoped returns a cached token with permission perm on contents of repo
// alone, minting one when none is fresh.
func (t *RepoTokens) scoped(ctx context.Context, repo, perm string) (string, error) {
	if !t.AllowedRepo(repo) {
		return "", fmt.Errorf("%s is not on the repository allow-list", repo)
	}
	if t.static != "" {
		return t.static, nil
	}
	key := perm + " " + strings.ToLower(repo)
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if c, ok := t.cache[key]; ok && now.Before(c.expires.Add(-refreshBefore)) {
		return c.tok, nil
	}
	jwt, err := t.app.jwt(now)
	if err != nil {
		return "", fmt.Errorf("could not sign the GitHub App JWT: %v", err)
	}
	t.app.secrets.addDynamic(jwt)
	_, name, _ := strings.Cut(repo, "/")
	it, resp, err := t.app.mint.WithAuthToken(jwt).Apps.CreateInstallationToken(ctx, t.app.installationID, &gh.InstallationTokenOptions{
		Repositories: []string{name},
		Permissions:  &gh.InstallationPermissions{Contents: gh.String(perm)},
	})
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
			return "", fmt.Errorf("the GitHub App's installation cannot reach %s", repo)
		}
		return "", fmt.Errorf("could not get a %s token for %s: %s", perm, repo, t.app.secrets.scrubber().String(err.Error()))
	}
	if it.GetToken() == "" {
		return "", errors.New("GitHub answered the token request without a token")
	}
	t.app.secrets.addDynamic(it.GetToken())
	exp := it.GetExpiresAt().Time
	if exp.IsZero() {
		exp = now.Add(time.Hour)
	}
	for k, c := range t.cache {
		if !now.Before(c.expires) {
			delete(t.cache, k)
		}
	}
	t.cache[key] = scopedToken{tok: it.GetToken(), expires: exp}
	return it.GetToken(), nil
}
