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
)

// Reaction sources: which of GitHub's reaction endpoints a comment takes.
const (
	SourceIssueComment  = "issue_comment"
	SourceReviewComment = "review_comment"
	SourceIssue         = "issue"
)

// ErrRateLimited wraps GitHub's primary and secondary rate limits; the
// caller backs off and tries again (an answer is never dropped).
var ErrRateLimited = errors.New("github rate limited")

// Client is the GitHub REST client of conversations: comments, reactions,
// collaborator permissions and a pull request's files.
type Client struct {
	gh  *gh.Client
	now func() time.Time

	mu    sync.Mutex
	perms map[string]cachedPerm // "owner/repo login" -> permission
}

type cachedPerm struct {
	level string
	at    time.Time
}

// PermissionTTL is how long a collaborator permission is cached.
const PermissionTTL = 2 * time.Minute

// New is a client of the REST API at baseURL ("" api.github.com)
// authenticated with token, or by hc's transport when token is ""; hc nil
// is http.DefaultClient.
func New(baseURL, token string, hc *http.Client, now func() time.Time) (*Client, error) {
	c := gh.NewClient(hc)
	if token != "" { // else hc authenticates (a GitHub App's transport)
		c = c.WithAuthToken(token)
	}
	if baseURL != "" {
		if !strings.HasSuffix(baseURL, "/") {
			baseURL += "/"
		}
		var err error
		if c, err = c.WithEnterpriseURLs(baseURL, baseURL); err != nil {
			return nil, fmt.Errorf("github: base url: %w", err)
		}
		// WithEnterpriseURLs adds /api/v3/ to a bare host; base_url is
		// the REST root as given.
		c.BaseURL, _ = c.BaseURL.Parse(baseURL)
	}
	if now == nil {
		now = time.Now
	}
	return &Client{gh: c, now: now, perms: map[string]cachedPerm{}}, nil
}

// Login is the login of the account the client's token is for (GET
// /user).
func (c *Client) Login(ctx context.Context) (string, error) {
	u, _, err := c.gh.Users.Get(ctx, "")
	if err != nil {
		return "", wrap("user", err)
	}
	return u.GetLogin(), nil
}

// React adds a reaction ("eyes", "+1") to a comment, or to the issue
// itself for SourceIssue (id is then ignored).
func (c *Client) React(ctx context.Context, t Thread, source string, id int64, content string) error {
	var err error
	switch source {
	case SourceReviewComment:
		_, _, err = c.gh.Reactions.CreatePullRequestCommentReaction(ctx, t.Owner, t.Repo, id, content)
	case SourceIssue:
		_, _, err = c.gh.Reactions.CreateIssueReaction(ctx, t.Owner, t.Repo, t.Number, content)
	default:
		_, _, err = c.gh.Reactions.CreateIssueCommentReaction(ctx, t.Owner, t.Repo, id, content)
	}
	return wrap("react", err)
}

// Comment posts a comment on the conversation and returns its id.
func (c *Client) Comment(ctx context.Context, t Thread, body string) (int64, error) {
	cm, _, err := c.gh.Issues.CreateComment(ctx, t.Owner, t.Repo, t.Number, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return 0, wrap("comment", err)
	}
	return cm.GetID(), nil
}

// Edit replaces a comment's body.
func (c *Client) Edit(ctx context.Context, t Thread, id int64, body string) error {
	_, _, err := c.gh.Issues.EditComment(ctx, t.Owner, t.Repo, id, &gh.IssueComment{Body: gh.String(body)})
	return wrap("edit comment", err)
}

// Permission is login's permission on the repository ("admin", "write",
// "read", "none"), cached for PermissionTTL.
func (c *Client) Permission(ctx context.Context, owner, repo, login string) (string, error) {
	key := owner + "/" + repo + " " + strings.ToLower(login)
	c.mu.Lock()
	p, ok := c.perms[key]
	c.mu.Unlock()
	if ok && c.now().Sub(p.at) < PermissionTTL {
		return p.level, nil
	}
	lvl, resp, err := c.gh.Repositories.GetPermissionLevel(ctx, owner, repo, login)
	level := "none"
	switch {
	case err == nil:
		level = lvl.GetPermission()
	case resp != nil && resp.StatusCode == http.StatusNotFound:
		// Not a collaborator (or no such user): no permission.
	default:
		return "", wrap("permission", err)
	}
	c.mu.Lock()
	c.perms[key] = cachedPerm{level, c.now()}
	c.mu.Unlock()
	return level, nil
}

// CanWrite reports whether login may write to the repository.
func (c *Client) CanWrite(ctx context.Context, owner, repo, login string) (bool, error) {
	p, err := c.Permission(ctx, owner, repo, login)
	return p == "admin" || p == "write" || p == "maintain", err
}

// Files lists a pull request's changed files (up to 300, GitHub's first
// pages).
func (c *Client) Files(ctx context.Context, t Thread) ([]string, error) {
	var out []string
	opt := &gh.ListOptions{PerPage: 100}
	for page := 0; page < 3; page++ {
		fs, resp, err := c.gh.PullRequests.ListFiles(ctx, t.Owner, t.Repo, t.Number, opt)
		if err != nil {
			return out, wrap("pull request files", err)
		}
		for _, f := range fs {
			out = append(out, f.GetFilename())
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return out, nil
}

// Ping checks the token works (GET /rate_limit costs no quota).
func (c *Client) Ping(ctx context.Context) error {
	_, _, err := c.gh.RateLimit.Get(ctx)
	return wrap("rate limit", err)
}

// wrap names the call and marks rate limits ErrRateLimited.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*gh.AbuseRateLimitError](err); ok {
		return fmt.Errorf("github %s: %w: %v", op, ErrRateLimited, err)
	}
	if _, ok := errors.AsType[*gh.RateLimitError](err); ok {
		return fmt.Errorf("github %s: %w: %v", op, ErrRateLimited, err)
	}
	return fmt.Errorf("github %s: %w", op, err)
}
