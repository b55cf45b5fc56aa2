package github

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/internal/contracts"
	"brain/internal/gittest"
)

// fakeGitHub is a GitHub REST API served by httptest: issues, comments,
// labels and pull requests are kept in memory; the read-only endpoints
// answer with the testdata fixtures, shaped as GitHub's REST docs show
// them. The real go-github client talks to it.
type fakeGitHub struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	requests []string // "METHOD /path?query", in order
	auths    []string // the Authorization header of each API request
	repos    map[string][]*fakeIssue
	next     int
	minted   int
	mints    []string // the body of each token request

	// Set by tests before requests arrive.
	token    string                                            // required bearer token of API requests; "" = any
	appKey   *rsa.PublicKey                                    // verifies App JWTs at the token endpoint
	clock    func() time.Time                                  // expires_at of minted tokens
	before   func(w http.ResponseWriter, r *http.Request) bool // true: handled
	dropNext bool                                              // the next write is done, then its connection dropped unanswered
	// git, when set, is the git host: tokens minted with a contents
	// permission are granted there for the repositories requested.
	git *gittest.Server

	// What GitHub's published description says is wrong with the requests
	// the fake received or the answers it gave; each fails the test at
	// its end unless the test takes them (contractViolations).
	violations []string
}

type fakeIssue struct {
	repo       string // owner/Name as GitHub spells it
	number     int
	title      string
	body       string
	state      string
	reason     string
	labels     []string
	comments   []fakeComment
	pull       bool
	head, base string
	created    time.Time
}

type fakeComment struct {
	id   int64
	body string
	at   time.Time
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{t: t, repos: map[string][]*fakeIssue{}, next: 1346, clock: time.Now}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", f.mintToken)
	mux.HandleFunc("GET /repos/{owner}/{repo}", f.getRepo)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues", f.listIssues)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues", f.createIssue)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}", f.getIssue)
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/{number}", f.editIssue)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}/comments", f.listComments)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", f.createComment)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/labels", f.addLabels)
	mux.HandleFunc("GET /search/issues", f.searchIssues)
	mux.HandleFunc("GET /search/code", f.fixture("search_code.json"))
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls", f.listPulls)
	mux.HandleFunc("POST /repos/{owner}/{repo}/pulls", f.createPull)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{number}", f.fixture("pull.json"))
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{number}/files", f.fixture("pull_files.json"))
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{number}/reviews", f.fixture("pull_reviews.json"))
	mux.HandleFunc("GET /repos/{owner}/{repo}/compare/{basehead}", f.fixture("compare.json"))
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits", f.fixture("commits.json"))
	// A ref may hold slashes (feature/x), which go-github sends as they are.
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{ref...}", func(w http.ResponseWriter, r *http.Request) {
		switch ref := r.PathValue("ref"); {
		case strings.HasSuffix(ref, "/check-runs"):
			f.fixture("check_runs.json")(w, r)
		case strings.HasSuffix(ref, "/status"):
			f.fixture("status.json")(w, r)
		default:
			notFound(w)
		}
	})
	mux.HandleFunc("GET /repos/{owner}/{repo}/contents/{path...}", f.contents)
	ops := map[string]bool{}
	api := contracts.LoadGitHub(t).Checked(mux, func(v string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.violations = append(f.violations, v)
	}, func(op string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		ops[op] = true
	})
	t.Cleanup(func() {
		for _, v := range f.contractViolations() {
			t.Error(v)
		}
		// For docs/testing.md's count of the tests exercising each operation.
		f.mu.Lock()
		defer f.mu.Unlock()
		for op := range ops {
			t.Logf("contract operation: %s", op)
		}
	})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
		if !strings.HasPrefix(r.URL.Path, "/app/") {
			f.auths = append(f.auths, r.Header.Get("Authorization"))
		}
		before, token := f.before, f.token
		f.mu.Unlock()
		if before != nil && before(w, r) {
			return
		}
		if token != "" && !strings.HasPrefix(r.URL.Path, "/app/") && r.Header.Get("Authorization") != "Bearer "+token {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
			return
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGitHub) url() string { return f.srv.URL + "/" }

// log returns the requests so far.
func (f *fakeGitHub) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// contractViolations returns and forgets what the published description
// found wrong so far.
func (f *fakeGitHub) contractViolations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.violations
	f.violations = nil
	return v
}

// writes counts the POST and PATCH requests so far.
func (f *fakeGitHub) writes() int {
	n := 0
	for _, r := range f.log() {
		if strings.HasPrefix(r, "POST /repos") || strings.HasPrefix(r, "PATCH ") {
			n++
		}
	}
	return n
}

// seed adds an issue (or pull request) and returns it.
func (f *fakeGitHub) seed(repo string, i fakeIssue) *fakeIssue {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i.number == 0 {
		f.next++
		i.number = f.next
	}
	if i.state == "" {
		i.state = "open"
	}
	if i.created.IsZero() {
		i.created = time.Date(2011, 4, 22, 13, 33, 48, 0, time.UTC).Add(time.Duration(i.number) * time.Minute)
	}
	i.repo = repo
	key := strings.ToLower(repo)
	f.repos[key] = append(f.repos[key], &i)
	return &i
}

// issues returns the repository's issues, pull requests included.
func (f *fakeGitHub) issues(repo string) []*fakeIssue {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.repos[strings.ToLower(repo)])
}

func (f *fakeGitHub) find(r *http.Request) (*fakeIssue, bool) {
	n, _ := strconv.Atoi(r.PathValue("number"))
	for _, i := range f.repos[repoKey(r)] {
		if i.number == n {
			return i, true
		}
	}
	return nil, false
}

func repoKey(r *http.Request) string {
	return strings.ToLower(r.PathValue("owner") + "/" + r.PathValue("repo"))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
}

// answer writes a write's answer, or drops the connection unanswered once
// if dropNext is set: the write happened, its answer is lost.
func (f *fakeGitHub) answer(w http.ResponseWriter, status int, v any) {
	f.mu.Lock()
	drop := f.dropNext
	f.dropNext = false
	f.mu.Unlock()
	if drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			f.t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
		return
	}
	writeJSON(w, status, v)
}

func (f *fakeGitHub) fixture(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.t.Errorf("fixture %s: %v", name, err)
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(data)
	}
}

func userJSON(login string) map[string]any {
	api := "https://api.github.com/users/" + login
	return map[string]any{
		"login": login, "id": 1, "node_id": "MDQ6VXNlcjE=", "avatar_url": "https://github.com/images/error/octocat_happy.gif",
		"gravatar_id": "", "url": api, "html_url": "https://github.com/" + login,
		"followers_url": api + "/followers", "following_url": api + "/following{/other_user}",
		"gists_url": api + "/gists{/gist_id}", "starred_url": api + "/starred{/owner}{/repo}",
		"subscriptions_url": api + "/subscriptions", "organizations_url": api + "/orgs", "repos_url": api + "/repos",
		"events_url": api + "/events{/privacy}", "received_events_url": api + "/received_events",
		"type": "User", "site_admin": false,
	}
}

func (f *fakeGitHub) issueJSON(i *fakeIssue) map[string]any {
	api := "https://api.github.com/repos/" + i.repo
	labels := []any{}
	for n, l := range i.labels {
		labels = append(labels, map[string]any{
			"id": 208045946 + n, "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=", "url": api + "/labels/" + l,
			"name": l, "description": "", "color": "f29513", "default": false,
		})
	}
	kind := "issues"
	if i.pull {
		kind = "pull"
	}
	out := map[string]any{
		"id": 1000 + i.number, "node_id": "MDU6SXNzdWUx",
		"url": fmt.Sprintf("%s/issues/%d", api, i.number), "repository_url": api,
		"labels_url":   fmt.Sprintf("%s/issues/%d/labels{/name}", api, i.number),
		"comments_url": fmt.Sprintf("%s/issues/%d/comments", api, i.number),
		"events_url":   fmt.Sprintf("%s/issues/%d/events", api, i.number),
		"html_url":     fmt.Sprintf("https://github.com/%s/%s/%d", i.repo, kind, i.number),
		"number":       i.number, "state": i.state, "title": i.title, "body": i.body,
		"user": userJSON("octocat"), "labels": labels, "assignee": nil, "assignees": []any{userJSON("octocat")},
		"milestone": nil, "locked": false, "active_lock_reason": nil, "comments": len(i.comments),
		"closed_at": nil, "created_at": i.created.Format(time.RFC3339), "updated_at": i.created.Format(time.RFC3339),
		"closed_by": nil, "author_association": "COLLABORATOR", "state_reason": nil,
	}
	if i.reason != "" {
		out["state_reason"] = i.reason
	}
	if i.pull {
		out["pull_request"] = map[string]any{
			"url":       fmt.Sprintf("%s/pulls/%d", api, i.number),
			"html_url":  fmt.Sprintf("https://github.com/%s/pull/%d", i.repo, i.number),
			"diff_url":  fmt.Sprintf("https://github.com/%s/pull/%d.diff", i.repo, i.number),
			"patch_url": fmt.Sprintf("https://github.com/%s/pull/%d.patch", i.repo, i.number),
		}
	}
	return out
}

func (f *fakeGitHub) commentJSON(i *fakeIssue, c fakeComment) map[string]any {
	return map[string]any{
		"id": c.id, "node_id": "MDEyOklzc3VlQ29tbWVudDE=",
		"url":      fmt.Sprintf("https://api.github.com/repos/%s/issues/comments/%d", i.repo, c.id),
		"html_url": fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", i.repo, i.number, c.id),
		"body":     c.body, "user": userJSON("octocat"),
		"created_at": c.at.Format(time.RFC3339), "updated_at": c.at.Format(time.RFC3339),
		"issue_url":          fmt.Sprintf("https://api.github.com/repos/%s/issues/%d", i.repo, i.number),
		"author_association": "COLLABORATOR",
	}
}

func (f *fakeGitHub) pullJSON(i *fakeIssue) map[string]any {
	owner, _, _ := strings.Cut(i.repo, "/")
	return map[string]any{
		"url":      fmt.Sprintf("https://api.github.com/repos/%s/pulls/%d", i.repo, i.number),
		"id":       2000 + i.number,
		"html_url": fmt.Sprintf("https://github.com/%s/pull/%d", i.repo, i.number),
		"number":   i.number, "state": i.state, "title": i.title, "body": i.body, "user": userJSON("octocat"),
		"head":  map[string]any{"label": owner + ":" + i.head, "ref": i.head, "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e"},
		"base":  map[string]any{"label": owner + ":" + i.base, "ref": i.base, "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e"},
		"draft": false, "merged": false, "mergeable": nil, "created_at": i.created.Format(time.RFC3339),
	}
}

func (f *fakeGitHub) getRepo(w http.ResponseWriter, r *http.Request) {
	full := r.PathValue("owner") + "/" + r.PathValue("repo")
	writeJSON(w, http.StatusOK, map[string]any{
		"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": r.PathValue("repo"), "full_name": full,
		"owner": userJSON(r.PathValue("owner")), "private": false, "html_url": "https://github.com/" + full,
		"description": "This your first repo!", "fork": false, "url": "https://api.github.com/repos/" + full,
		"default_branch": "master", "has_issues": true, "open_issues_count": 0,
	})
}

func (f *fakeGitHub) listIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	f.mu.Lock()
	all := slices.Clone(f.repos[repoKey(r)])
	f.mu.Unlock()
	slices.SortFunc(all, func(a, b *fakeIssue) int { return b.number - a.number }) // created, desc
	out := []any{}
	for _, i := range all {
		if state != "all" && i.state != state {
			continue
		}
		if !containsAll(i.labels, want) {
			continue
		}
		out = append(out, f.issueJSON(i))
	}
	writeJSON(w, http.StatusOK, page(out, q))
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// page applies page and per_page (default 30) as GitHub does.
func page[T any](items []T, q map[string][]string) []T {
	get := func(k string, def int) int {
		if v, ok := q[k]; ok && len(v) > 0 {
			if n, err := strconv.Atoi(v[0]); err == nil && n > 0 {
				return n
			}
		}
		return def
	}
	per, p := get("per_page", 30), get("page", 1)
	start := min((p-1)*per, len(items))
	return items[start:min(start+per, len(items))]
}

func (f *fakeGitHub) createIssue(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title  string   `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Title == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
			"errors": []any{map[string]any{"resource": "Issue", "field": "title", "code": "missing_field"}}})
		return
	}
	i := f.seed(r.PathValue("owner")+"/"+r.PathValue("repo"), fakeIssue{title: in.Title, body: in.Body, labels: in.Labels})
	f.answer(w, http.StatusCreated, f.issueJSON(i))
}

func (f *fakeGitHub) getIssue(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	i, ok := f.find(r)
	f.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, f.issueJSON(i))
}

func (f *fakeGitHub) editIssue(w http.ResponseWriter, r *http.Request) {
	var in struct {
		State       string `json:"state"`
		StateReason string `json:"state_reason"`
	}
	_ = json.NewDecoder(r.Body).Decode(&in)
	f.mu.Lock()
	i, ok := f.find(r)
	if ok && in.State != "" {
		i.state, i.reason = in.State, in.StateReason
	}
	f.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	f.answer(w, http.StatusOK, f.issueJSON(i))
}

func (f *fakeGitHub) listComments(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	i, ok := f.find(r)
	var out []any
	if ok {
		for _, c := range i.comments {
			out = append(out, f.commentJSON(i, c))
		}
	}
	f.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, append([]any{}, page(out, r.URL.Query())...))
}

func (f *fakeGitHub) createComment(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Body string `json:"body"`
	}
	_ = json.NewDecoder(r.Body).Decode(&in)
	f.mu.Lock()
	i, ok := f.find(r)
	var c fakeComment
	if ok {
		c = fakeComment{id: int64(1000 + len(i.comments)), body: in.Body, at: i.created.Add(time.Hour)}
		i.comments = append(i.comments, c)
	}
	f.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	f.answer(w, http.StatusCreated, f.commentJSON(i, c))
}

func (f *fakeGitHub) addLabels(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Labels []string `json:"labels"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Invalid request."})
		return
	}
	in := body.Labels
	f.mu.Lock()
	i, ok := f.find(r)
	var out []any
	if ok {
		for _, l := range in {
			if !slices.Contains(i.labels, l) {
				i.labels = append(i.labels, l)
			}
		}
		out = f.issueJSON(i)["labels"].([]any)
	}
	f.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	f.answer(w, http.StatusOK, out)
}

// searchIssues answers with every issue of the repositories the query
// names (repo:, user:), and one from outside, which a confined search must
// drop.
func (f *fakeGitHub) searchIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	f.mu.Lock()
	var items []any
	for key, issues := range f.repos {
		owner, _, _ := strings.Cut(key, "/")
		if !strings.Contains(strings.ToLower(q), "repo:"+key) && !strings.Contains(strings.ToLower(q), "user:"+owner) {
			continue
		}
		for _, i := range issues {
			it := f.issueJSON(i)
			it["score"] = 1
			items = append(items, it)
		}
	}
	f.mu.Unlock()
	outside := f.issueJSON(&fakeIssue{repo: "batterseapower/pinyin-toolkit", number: 88, title: "Line Number Indexes Beyond 20 Not Displayed", state: "open", created: time.Date(2009, 7, 12, 20, 10, 41, 0, time.UTC)})
	outside["score"] = 1
	items = append(items, outside)
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(items), "incomplete_results": false, "items": items})
}

func (f *fakeGitHub) listPulls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	var out []any
	for _, i := range f.repos[repoKey(r)] {
		owner, _, _ := strings.Cut(i.repo, "/")
		if !i.pull || (q.Get("head") != "" && q.Get("head") != owner+":"+i.head) || (q.Get("base") != "" && q.Get("base") != i.base) {
			continue
		}
		out = append(out, f.pullJSON(i))
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, append([]any{}, page(out, q)...))
}

func (f *fakeGitHub) createPull(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title, Head, Base, Body string
		Draft                   bool
	}
	_ = json.NewDecoder(r.Body).Decode(&in)
	i := f.seed(r.PathValue("owner")+"/"+r.PathValue("repo"), fakeIssue{title: in.Title, body: in.Body, pull: true, head: in.Head, base: in.Base})
	f.answer(w, http.StatusCreated, f.pullJSON(i))
}

// contents serves README.md (text), lib (a directory), logo.png (binary)
// and huge.log (over 1 MiB, which the API returns without content).
func (f *fakeGitHub) contents(w http.ResponseWriter, r *http.Request) {
	p := r.PathValue("path")
	file := func(content []byte, size int, encoding string) map[string]any {
		enc := base64.StdEncoding.EncodeToString(content)
		var wrapped strings.Builder // GitHub wraps base64 at 60 characters
		for len(enc) > 60 {
			wrapped.WriteString(enc[:60] + "\n")
			enc = enc[60:]
		}
		wrapped.WriteString(enc + "\n")
		text := wrapped.String()
		if encoding == "none" {
			text = ""
		}
		return map[string]any{
			"type": "file", "encoding": encoding, "size": size, "name": filepath.Base(p), "path": p,
			"content": text, "sha": "3d21ec53a331a6f037a91c368710b99387d012c1",
			"url":          "https://api.github.com/repos/octocat/Hello-World/contents/" + p,
			"git_url":      "https://api.github.com/repos/octocat/Hello-World/git/blobs/3d21ec53a331a6f037a91c368710b99387d012c1",
			"html_url":     "https://github.com/octocat/Hello-World/blob/master/" + p,
			"download_url": "https://raw.githubusercontent.com/octocat/Hello-World/master/" + p,
		}
	}
	switch p {
	case "README.md":
		text := []byte("# Hello World\n\nThis is the README (ref " + r.URL.Query().Get("ref") + ").\n")
		writeJSON(w, http.StatusOK, file(text, len(text), "base64"))
	case "logo.png":
		bin := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
		writeJSON(w, http.StatusOK, file(bin, len(bin), "base64"))
	case "huge.log":
		writeJSON(w, http.StatusOK, file(nil, 5<<20, "none"))
	case "lib":
		f.fixture("content_dir.json")(w, r)
	default:
		notFound(w)
	}
}

// mintToken is POST /app/installations/{id}/access_tokens: it checks the
// App JWT (RS256, signed with the test key) and mints an hour-long token.
func (f *fakeGitHub) mintToken(w http.ResponseWriter, r *http.Request) {
	jwt := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if err := f.verifyJWT(jwt); err != nil {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "A JSON web token could not be decoded", "documentation_url": "https://docs.github.com/rest"})
		f.t.Errorf("JWT: %v", err)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	var req struct {
		Repositories []string          `json:"repositories"`
		Permissions  map[string]string `json:"permissions"`
	}
	_ = json.Unmarshal(body, &req)
	perms := map[string]any{"issues": "write", "contents": "read"}
	if len(req.Permissions) > 0 {
		perms = map[string]any{}
		for k, v := range req.Permissions {
			perms[k] = v
		}
	}
	f.mu.Lock()
	f.mints = append(f.mints, string(body))
	f.minted++
	n := f.minted
	now := f.clock()
	git := f.git
	f.mu.Unlock()
	tok := fmt.Sprintf("ghs_16C7e42F292c6912E7710c838347Ae17%04d", n)
	if c := req.Permissions["contents"]; git != nil && c != "" {
		// The git host honours what was asked for: contents read or
		// write, on the repositories named (the installation's, acme).
		var repos []string
		for _, name := range req.Repositories {
			repos = append(repos, "acme/"+name)
		}
		git.Grant(tok, c == "write", repos...)
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"token":                tok,
		"expires_at":           now.Add(time.Hour).UTC().Format(time.RFC3339),
		"permissions":          perms,
		"repository_selection": "selected",
	})
}

func (f *fakeGitHub) verifyJWT(jwt string) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%d parts", len(parts))
	}
	enc := base64.RawURLEncoding
	var header struct{ Alg, Typ string }
	var claims struct {
		Iat, Exp int64
		Iss      string
	}
	for i, v := range []any{&header, &claims} {
		raw, err := enc.DecodeString(parts[i])
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return err
		}
	}
	if header.Alg != "RS256" || claims.Iss == "" || claims.Exp-claims.Iat > 600 || claims.Exp <= f.clock().Unix() {
		return fmt.Errorf("header %+v claims %+v", header, claims)
	}
	sig, err := enc.DecodeString(parts[2])
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	return rsa.VerifyPKCS1v15(f.appKey, crypto.SHA256, sum[:], sig)
}
