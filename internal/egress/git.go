package egress

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// CredentialPath is where the sandbox's git credential helper asks for a
// grant (origin-form, on the same socket as the proxy).
const CredentialPath = "/brain/git-credential"

// GrantUser is the user name git sends with a grant; GitHub takes any user
// name with an installation token.
const GrantUser = "x-access-token"

// grantPrefix marks grants so they are recognised (and never mistaken for a
// token) wherever they show up.
const grantPrefix = "brain-grant-"

// grantTTL bounds a grant; git asks again for a new clone or fetch.
const grantTTL = time.Hour

type grant struct {
	repo    string // owner/name, lower case
	expires time.Time
}

// gitPath is a smart-HTTP path: /owner/name(.git)/ then the service part.
var gitPath = regexp.MustCompile(`^/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/(info/refs|git-upload-pack|git-receive-pack)$`)

// repoOf returns owner/name of a smart-HTTP path, lower case, and the
// service part.
func repoOf(path string) (repo, service string, ok bool) {
	m := gitPath.FindStringSubmatch(path)
	if m == nil || strings.Trim(m[1], ".") == "" || strings.Trim(m[2], ".") == "" {
		return "", "", false // "..", which a server would resolve elsewhere
	}
	return strings.ToLower(m[1] + "/" + m[2]), m[3], true
}

// gitRequest checks a request to a git host and rewrites it to go to base:
// only fetches (upload-pack) pass; a grant in the Authorization becomes
// the real read token of its repository; any other Authorization is
// dropped.
func (x *Proxy) gitRequest(r *http.Request, host, base string) (gitCall, error) {
	repo, service, ok := repoOf(r.URL.Path)
	if !ok {
		return gitCall{}, refuse("%s: only git fetches and clones of owner/name repositories go to a git host (not %s)", host, r.URL.Path)
	}
	if service == "git-receive-pack" || r.URL.Query().Get("service") == "git-receive-pack" {
		return gitCall{}, refuse("git push to %s/%s is not allowed from the sandbox: propose the change with github_propose_change and a person approves it", host, repo)
	}
	if service == "info/refs" && r.URL.Query().Get("service") != "git-upload-pack" {
		return gitCall{}, refuse("%s: only the smart HTTP protocol of git is served", host)
	}
	if service == "git-upload-pack" && r.Method != http.MethodPost || service == "info/refs" && r.Method != http.MethodGet {
		return gitCall{}, refuse("%s: %s %s is not a git fetch", host, r.Method, r.URL.Path)
	}
	call := gitCall{repo: repo, service: service}
	u, err := url.Parse(strings.TrimSuffix(base, "/") + r.URL.Path)
	if err != nil {
		return gitCall{}, refuse("git host %s: %v", host, err)
	}
	u.RawQuery = r.URL.RawQuery
	r.URL = u
	r.Host = u.Host
	auth := r.Header.Get("Authorization")
	r.Header.Del("Authorization")
	if auth == "" {
		return call, nil // a public repository, or git will ask its helper after the 401
	}
	_, pass, ok := basicAuth(auth)
	if !ok || !strings.HasPrefix(pass, grantPrefix) {
		return gitCall{}, refuse("%s/%s: credentials other than brain's grants are not forwarded", host, repo)
	}
	g, ok := x.grant(pass)
	switch {
	case !ok:
		return gitCall{}, refuse("%s/%s: the credential grant is unknown or expired; run the git command again", host, repo)
	case g.repo != repo:
		return gitCall{}, refuse("%s/%s: the credential grant was issued for %s, not this repository", host, repo, g.repo)
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	tok, err := x.policy.Credentials.ReadToken(ctx, TokenRequest{Repo: repo, SessionID: x.sessionID, Agent: x.agent})
	if err != nil {
		return gitCall{}, refuse("%s/%s: no read token: %v", host, repo, err)
	}
	r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(GrantUser+":"+tok)))
	call.token = tok
	return call, nil
}

// gitCall is a git request the proxy let through: the repository
// (owner/name, lower case), the service part of its path, and the read
// token it carries ("" when the sandbox sent no grant).
type gitCall struct {
	repo, service, token string
}

func basicAuth(h string) (user, pass string, ok bool) {
	r := http.Request{Header: http.Header{"Authorization": {h}}}
	return r.BasicAuth()
}

func (x *Proxy) grant(secret string) (grant, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	g, ok := x.grants[secret]
	if ok && !x.now().Before(g.expires) {
		delete(x.grants, secret)
		return grant{}, false
	}
	return g, ok
}

// credential answers git's credential helper: the request body is git's
// credential description (key=value lines: protocol, host, path); the
// answer is username and password lines, or 403 with the reason.
func (x *Proxy) credential(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST a git credential description", http.StatusMethodNotAllowed)
		return
	}
	desc, err := readCredential(io.LimitReader(r.Body, 8<<10))
	if err != nil {
		http.Error(w, "brain credential helper: "+err.Error(), http.StatusBadRequest)
		return
	}
	host := desc["host"]
	refused := func(err error) {
		x.count(host, err)
		http.Error(w, "brain credential helper: refused: "+err.Error(), http.StatusForbidden)
	}
	h, port, err := hostPort(host, 80)
	if err != nil {
		refused(refuse("%v", err))
		return
	}
	if _, ok := x.gitHost(h, port); !ok {
		refused(refuse("%s is not a git host brain brokers credentials for", host))
		return
	}
	repo, _, ok := repoOf("/" + strings.TrimSuffix(desc["path"], "/") + "/info/refs")
	if !ok {
		refused(refuse("%s: git gave no owner/name path (credential.useHttpPath must be true)", host))
		return
	}
	if x.policy.Credentials == nil || !x.policy.Credentials.AllowedRepo(repo) {
		refused(refuse("%s/%s is not on the GitHub repository allow-list; brain gives no credentials for it", host, repo))
		return
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		http.Error(w, "brain credential helper: no randomness", http.StatusInternalServerError)
		return
	}
	secret := grantPrefix + hex.EncodeToString(b[:])
	x.mu.Lock()
	now := x.now()
	for k, g := range x.grants {
		if !now.Before(g.expires) {
			delete(x.grants, k)
		}
	}
	x.grants[secret] = grant{repo: repo, expires: now.Add(grantTTL)}
	x.mu.Unlock()
	x.count(host, nil)
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "username=%s\npassword=%s\n", GrantUser, secret)
}

// readCredential parses git's credential description.
func readCredential(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %q is not key=value", line)
		}
		out[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if out["host"] == "" {
		return nil, fmt.Errorf("no host")
	}
	return out, nil
}
