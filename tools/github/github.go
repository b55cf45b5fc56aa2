// Package github is the github_* tool family on go-github: tools that read
// issues, pull requests, files, commits and checks run at once; tools that
// write (create an issue, comment, label, close, open a pull request) are
// approval tools whose apply runs exactly once per decision, by stamping the
// decision id into what it creates and looking for it before creating again.
//
// Every repository is checked against an allow-list before anything is sent,
// searches are confined to it, and every request goes through
// tools.OnceTransport: GitHub has no idempotency keys, so nothing is re-sent
// on the wire, and rate limits become tool errors saying when to retry. The
// token, the App's JWTs and installation tokens never appear in results or
// errors.
//
// It imports only brain/tools, never engine or bot.
package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"

	"brain/tools"
)

// DefaultMaxOutputBytes caps a result when Config leaves MaxOutputBytes zero.
const DefaultMaxOutputBytes = 64 << 10

// Config turns on the family. Exactly one of Token and App authenticates.
type Config struct {
	// Token is a fine-grained personal access token (or any bearer token).
	Token string
	App   *App
	// BaseURL is the REST API root; empty means https://api.github.com/.
	// GitHub Enterprise Server: https://HOST/api/v3/.
	BaseURL string
	// Repos is the allow-list: owner/name, the name may be a path.Match
	// glob ("acme/*"); the owner must be literal. Case is ignored.
	Repos []string
	// MaxOutputBytes caps each result's JSON; a longer one is cut and
	// marked "truncated": true.
	MaxOutputBytes int
	// Now is the clock for App tokens and retry times; nil means time.Now.
	Now func() time.Time
	// Transport is the base of every connection (dialer, proxy, TLS); nil
	// means a transport of the package's own. It is used through its
	// tools.OnceTransport copy.
	Transport *http.Transport

	// Workspace returns the host directory of a session's sandbox
	// workspace (its /workspace); nil leaves github_propose_change out.
	Workspace func(sessionID string) string
	// ActsAs says whose credential each tool uses: tool name (or
	// ActsAsDefault, for every tool not named) -> tools.ActsAsApp (the
	// default), ActsAsRequester or ActsAsApprover. Tools acting as a
	// person need UserTokens (actas.go).
	ActsAs     map[string]string
	UserTokens UserTokens

	// GitURL is the root of the git host's smart HTTP URLs
	// (GitURL/owner/name.git); empty means https://github.com, or the
	// scheme and host of BaseURL for GitHub Enterprise Server.
	GitURL string
}

// App authenticates as one installation of a GitHub App.
type App struct {
	AppID          int64
	InstallationID int64
	// PrivateKey is the app's private key, PEM (PKCS #1 or PKCS #8).
	PrivateKey []byte
}

// client is what every tool of the family shares.
type client struct {
	api     *gh.Client
	repos   allowList
	secrets *secrets
	now     func() time.Time
	max     int

	// For github_propose_change: repository-scoped tokens, a client for
	// the git host that follows no redirect, its root, the workspaces.
	tokens    *RepoTokens
	git       *http.Client
	gitURL    string
	workspace func(sessionID string) string
}

// Tools checks cfg and returns the family's tools. Errors name the key
// that is wrong, never a secret.
func Tools(cfg Config) ([]tools.Definition, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	defs := append(c.readTools(), c.writeTools()...)
	if c.workspace != nil {
		defs = append(defs, c.proposeTool())
	}
	modes, err := actsAsModes(cfg.ActsAs, defs, cfg.UserTokens)
	if err != nil {
		return nil, err
	}
	for i, d := range defs {
		if mode, ok := modes[d.Name]; ok {
			d = c.actingAs(d, mode, cfg.UserTokens)
		}
		if strings.Contains(string(d.Input), `"repo":`) {
			// GitHub compares owners and repository names ignoring
			// case; so do the approval policies on $.repo.
			d.FoldCase = []string{"$.repo"}
		}
		defs[i] = c.scrubbed(d)
		if _, err := tools.Compile(defs[i]); err != nil {
			return nil, err
		}
	}
	return defs, nil
}

// scrubbed wraps the tool so nothing it returns holds a secret: results
// are scrubbed by result already; cards and error messages quote what
// GitHub answered (a title, a message), which is scrubbed here.
func (c *client) scrubbed(d tools.Definition) tools.Definition {
	if run := d.Run; run != nil {
		d.Run = func(ctx context.Context, call tools.Call) (json.RawMessage, error) {
			out, err := run(ctx, call)
			return out, c.scrubError(err)
		}
	}
	if preview := d.Preview; preview != nil {
		d.Preview = func(ctx context.Context, call tools.Call) (tools.Card, error) {
			card, err := preview(ctx, call)
			if err != nil {
				return tools.Card{}, c.scrubError(err)
			}
			s := c.secrets.scrubber()
			// Found holds commit ids and paths, never a secret; apply
			// needs them exactly as found.
			out := tools.Card{Title: s.String(card.Title), Detail: s.String(card.Detail), Found: card.Found}
			for _, f := range card.Facts {
				out.Facts = append(out.Facts, tools.Fact{Label: s.String(f.Label), Value: s.String(f.Value)})
			}
			return out, nil
		}
	}
	if apply := d.Apply; apply != nil {
		d.Apply = func(ctx context.Context, call tools.Call, dec tools.Decision) (json.RawMessage, error) {
			out, err := apply(ctx, call, dec)
			return out, c.scrubError(err)
		}
	}
	return d
}

// scrubError is err with secrets redacted, as a tools.Error. An error of
// another kind (none is expected) keeps the engine's reading of it: the
// outcome is unknown.
func (c *client) scrubError(err error) error {
	if err == nil {
		return nil
	}
	s := c.secrets.scrubber()
	if _, ok := tools.AsConnectionRequired(err); ok {
		return err // names a person and a provider, never a secret
	}
	var te *tools.Error
	if errors.As(err, &te) {
		return &tools.Error{Message: s.String(te.Message), UnknownOutcome: te.UnknownOutcome}
	}
	return &tools.Error{Message: s.String(err.Error()), UnknownOutcome: true}
}

func newClient(cfg Config) (*client, error) {
	repos, err := newAllowList(cfg.Repos)
	if err != nil {
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	base, err := apiRoot(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	transport := cfg.Transport
	if transport == nil {
		transport = ownTransport()
	}
	once := tools.OnceTransport(transport)
	sec := &secrets{}
	var src tokenSource
	switch {
	case cfg.Token != "" && cfg.App != nil:
		return nil, errors.New("set token or app, not both")
	case cfg.Token != "":
		sec.addStatic(cfg.Token)
		src = staticToken(cfg.Token)
	case cfg.App != nil:
		app, err := newAppTokens(*cfg.App, base, once, now, sec)
		if err != nil {
			return nil, err
		}
		src = app
	default:
		return nil, errors.New("no credential: set token or app")
	}
	httpc := &http.Client{
		Transport:     &authTransport{base: once, src: src, host: base.Host},
		CheckRedirect: readRedirectsOnly,
	}
	api := gh.NewClient(httpc)
	api.BaseURL = base
	api.UserAgent = "brain"
	max := cfg.MaxOutputBytes
	if max <= 0 {
		max = DefaultMaxOutputBytes
	}
	gitURL, err := gitRoot(cfg.GitURL, cfg.BaseURL, base)
	if err != nil {
		return nil, err
	}
	c := &client{api: api, repos: repos, secrets: sec, now: now, max: max, workspace: cfg.Workspace, gitURL: gitURL,
		git: &http.Client{Transport: once, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	c.tokens = &RepoTokens{repos: repos, now: now, cache: map[string]scopedToken{}}
	switch src := src.(type) {
	case staticToken:
		c.tokens.static = string(src)
	case *appTokens:
		c.tokens.app = src
	}
	return c, nil
}

// gitRoot is the git host's URL root: git_url, else github.com for the
// public API, else the API's scheme and host (GitHub Enterprise Server
// serves git beside /api/v3).
func gitRoot(gitURL, baseURL string, api *url.URL) (string, error) {
	switch {
	case gitURL != "":
		u, err := url.Parse(gitURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
			return "", fmt.Errorf("git_url %q is not an http or https URL without credentials or query", gitURL)
		}
		return strings.TrimSuffix(u.String(), "/"), nil
	case baseURL == "" || api.Host == "api.github.com":
		return "https://github.com", nil
	default:
		return api.Scheme + "://" + api.Host, nil
	}
}

// apiRoot parses base_url, with the trailing slash go-github requires.
func apiRoot(s string) (*url.URL, error) {
	if s == "" {
		s = "https://api.github.com/"
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base_url %q is not an http or https URL", s)
	}
	if u.User != nil || u.RawQuery != "" {
		return nil, errors.New("base_url must not carry credentials or a query")
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// ownTransport is net/http's default transport (tools.OnceTransport turns
// its keep-alives off) with a bound on how long GitHub may take to answer.
func ownTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 60 * time.Second
	return t
}

// readRedirectsOnly follows redirects of reads (a renamed repository
// answers 301) and never of writes: a 307 would send the body again.
func readRedirectsOnly(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	if m := via[0].Method; m != http.MethodGet && m != http.MethodHead {
		return http.ErrUseLastResponse
	}
	return nil
}

// result is the compact JSON the model sees: scrubbed of secrets, then cut
// to the size limit.
func (c *client) result(v any) (json.RawMessage, error) {
	return fit(v, c.max, c.secrets.scrubber())
}

// parseInput decodes a call's arguments into v.
func parseInput(tool string, input json.RawMessage, v any) error {
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	if err := json.Unmarshal(input, v); err != nil {
		return tools.Failed("%s: arguments do not match the schema: %v; nothing was sent", tool, err)
	}
	return nil
}

// call runs one GitHub operation, with what is needed to tell afterwards
// whether a request left: every failure becomes a tools.Error.
func (c *client) call(ctx context.Context, op string, fn func(ctx context.Context) (*gh.Response, error)) error {
	ctx, sent := withSentFlag(ctx)
	resp, err := fn(ctx)
	if err == nil {
		return nil
	}
	return c.fail(ctx, op, resp, err, sent.Load())
}
