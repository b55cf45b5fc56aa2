package github

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"brain/tools"
	"brain/tools/toolstest"
)

const testToken = "github_pat_11AAAAAAA0abcdefghijklmnopqrstuvwxyz0123456789"

// family is the tools of one configured client, by name.
type family map[string]*tools.Tool

// newFamily configures the family against the fake with a token and
// the allow-list octocat/Hello-World, acme/*.
func newFamily(t *testing.T, f *fakeGitHub, edit ...func(*Config)) family {
	t.Helper()
	cfg := Config{Token: testToken, BaseURL: f.url(), Repos: []string{"octocat/Hello-World", "acme/*"}}
	for _, e := range edit {
		e(&cfg)
	}
	f.mu.Lock()
	if cfg.Token != "" {
		f.token = cfg.Token
	}
	f.mu.Unlock()
	defs, err := Tools(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fm := family{}
	for _, d := range defs {
		tool, err := tools.Compile(d)
		if err != nil {
			t.Fatal(err)
		}
		fm[d.Name] = tool
	}
	return fm
}

// run validates the input as the engine does, then runs the tool.
func (fm family) run(t *testing.T, name, input string) (map[string]any, error) {
	t.Helper()
	tool := fm[name]
	if tool == nil || tool.Run == nil {
		t.Fatalf("no run tool %s", name)
	}
	if err := tool.ValidateInput(json.RawMessage(input)); err != nil {
		t.Fatalf("%s: input %s: %v", name, input, err)
	}
	raw, err := tool.Run(context.Background(), tools.Call{Input: json.RawMessage(input), SessionID: "s1", ToolCallID: "c1"})
	if err != nil {
		return nil, err
	}
	return decode(t, raw), nil
}

func (fm family) mustRun(t *testing.T, name, input string) map[string]any {
	t.Helper()
	out, err := fm.run(t, name, input)
	if err != nil {
		t.Fatalf("%s %s: %v", name, input, err)
	}
	return out
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return out
}

func str(v any) string { return fmt.Sprint(v) }

func TestGetIssue_LatestCommentsNewestFirst(t *testing.T) {
	f := newFakeGitHub(t)
	i := f.seed("octocat/Hello-World", fakeIssue{number: 1347, title: "Found a bug", labels: []string{"bug"},
		body: "I'm having a problem with this.\n\n<!-- brain:decision=dec_1 -->"})
	for n := range 12 {
		i.comments = append(i.comments, fakeComment{id: int64(n + 1), body: fmt.Sprintf("comment %d", n+1), at: i.created})
	}
	fm := newFamily(t, f)
	out := fm.mustRun(t, "github_get_issue", `{"repo":"octocat/Hello-World","number":1347}`)
	if out["title"] != "Found a bug" || out["state"] != "open" || out["body"] != "I'm having a problem with this." ||
		str(out["labels"]) != "[bug]" || out["comments"] != 12.0 || out["url"] != "https://github.com/octocat/Hello-World/issues/1347" {
		t.Fatalf("issue %v", out)
	}
	comments := out["latest_comments"].([]any)
	if len(comments) != 10 || comments[0].(map[string]any)["body"] != "comment 12" || comments[9].(map[string]any)["body"] != "comment 3" {
		t.Fatalf("latest comments %v", comments)
	}
	// The last page (per_page 10) held two; the one before it the rest.
	want := []string{
		"GET /repos/octocat/Hello-World/issues/1347",
		"GET /repos/octocat/Hello-World/issues/1347/comments?page=2&per_page=10",
		"GET /repos/octocat/Hello-World/issues/1347/comments?page=1&per_page=10",
	}
	if got := f.log(); str(got) != str(want) {
		t.Fatalf("requests %q, want %q", got, want)
	}
	for _, a := range f.auths {
		if a != "Bearer "+testToken {
			t.Fatalf("Authorization %q", a)
		}
	}
}

func TestListIssues(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("acme/widgets", fakeIssue{title: "Printer on fire", labels: []string{"bug", "p1"}, body: strings.Repeat("smoke ", 100)})
	f.seed("acme/widgets", fakeIssue{title: "Paper jam", labels: []string{"bug"}})
	f.seed("acme/widgets", fakeIssue{title: "Done", labels: []string{"bug"}, state: "closed"})
	f.seed("acme/widgets", fakeIssue{title: "Add a dark mode", pull: true, labels: []string{"bug"}})
	fm := newFamily(t, f)
	out := fm.mustRun(t, "github_list_issues", `{"repo":"acme/widgets","labels":["bug"],"limit":5}`)
	items := out["items"].([]any)
	if len(items) != 3 || out["state"] != "open" || out["repo"] != "acme/widgets" {
		t.Fatalf("items %v", out)
	}
	first, last := items[0].(map[string]any), items[2].(map[string]any)
	if first["title"] != "Add a dark mode" || first["pull_request"] != true || last["title"] != "Printer on fire" ||
		len([]rune(last["body"].(string))) != maxExcerpt || out["truncated"] != true {
		t.Fatalf("items %v", items)
	}
	if got := f.log(); len(got) != 1 || got[0] != "GET /repos/acme/widgets/issues?labels=bug&per_page=5&state=open" {
		t.Fatalf("requests %q", got)
	}
}

func TestSearchIssues_ConfinedToTheAllowList(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("octocat/Hello-World", fakeIssue{title: "Found a bug"})
	f.seed("acme/widgets", fakeIssue{title: "Printer on fire"})
	fm := newFamily(t, f)
	out := fm.mustRun(t, "github_search_issues", `{"query":"is:open fire","limit":10}`)
	if out["query"] != "is:open fire repo:octocat/hello-world user:acme" {
		t.Fatalf("query %v", out["query"])
	}
	items := out["items"].([]any)
	if len(items) != 2 || out["dropped_outside_allow_list"] != 1.0 {
		t.Fatalf("items %v", out)
	}
	for _, it := range items {
		if r := it.(map[string]any)["repo"]; r != "octocat/Hello-World" && r != "acme/widgets" {
			t.Fatalf("item from %v", r)
		}
	}

	// The model may narrow the search to an allowed repository, never widen it.
	out = fm.mustRun(t, "github_search_issues", `{"query":"fire repo:acme/widgets -repo:evil/x"}`)
	if out["query"] != "fire repo:acme/widgets -repo:evil/x" || len(out["items"].([]any)) != 1 {
		t.Fatalf("narrowed %v", out)
	}
	before := len(f.log())
	for _, q := range []string{"fire repo:evil/x", "fire org:evil", "fire user:octocat", `fire REPO:"evil/x"`} {
		_, err := fm.run(t, "github_search_issues", fmt.Sprintf(`{"query":%q}`, q))
		toolstest.ToolError(t, err, false, "outside the allow-list", "nothing was sent")
	}
	if len(f.log()) != before {
		t.Fatalf("a refused search was sent: %q", f.log()[before:])
	}
}

func TestGetPullRequest(t *testing.T) {
	f := newFakeGitHub(t)
	fm := newFamily(t, f)
	out := fm.mustRun(t, "github_get_pull_request", `{"repo":"octocat/Hello-World","number":1347}`)
	if out["title"] != "Amazing new feature" || out["mergeable"] != true || out["mergeable_state"] != "clean" ||
		out["head"] != "octocat:new-topic" || out["base"] != "master" || out["additions"] != 100.0 || out["deletions"] != 3.0 {
		t.Fatalf("pull request %v", out)
	}
	files := out["files"].([]any)
	if len(files) != 2 || str(files[1]) != "map[additions:2 deletions:1 path:docs/new-name.md previous_path:docs/old-name.md status:renamed]" {
		t.Fatalf("files %v", files)
	}
	if str(out["reviews"]) != "map[hubot:CHANGES_REQUESTED octocat:APPROVED]" || str(out["review_requested"]) != "[other_user]" {
		t.Fatalf("reviews %v, requested %v", out["reviews"], out["review_requested"])
	}
	checks := out["checks"].(map[string]any)
	if str(checks["by_outcome"]) != "map[failure:1 neutral:1]" || checks["combined_status"] != "success" || checks["total"] != 2.0 {
		t.Fatalf("checks %v", checks)
	}
	if _, ok := out["truncated"]; ok {
		t.Fatalf("truncated without a cut: %v", out)
	}
	want := "GET /repos/octocat/Hello-World/commits/6dcb09b5b57875f334f61aebed695e2e4193db5e/check-runs?per_page=100"
	if !strings.Contains(str(f.log()), want) {
		t.Fatalf("requests %q lack %q", f.log(), want)
	}
}

func TestGetFile(t *testing.T) {
	f := newFakeGitHub(t)
	fm := newFamily(t, f)
	out := fm.mustRun(t, "github_get_file", `{"repo":"octocat/Hello-World","path":"README.md","ref":"v1.0"}`)
	if out["content"] != "# Hello World\n\nThis is the README (ref v1.0).\n" || out["path"] != "README.md" || out["sha"] != "3d21ec53a331a6f037a91c368710b99387d012c1" {
		t.Fatalf("file %v", out)
	}
	_, err := fm.run(t, "github_get_file", `{"repo":"octocat/Hello-World","path":"lib"}`)
	toolstest.ToolError(t, err, false, "lib is a directory, not a file", "octokit.rb, octokit/")
	_, err = fm.run(t, "github_get_file", `{"repo":"octocat/Hello-World","path":"logo.png"}`)
	toolstest.ToolError(t, err, false, "logo.png is a binary file")
	_, err = fm.run(t, "github_get_file", `{"repo":"octocat/Hello-World","path":"huge.log"}`)
	toolstest.ToolError(t, err, false, "over the 1048576-byte limit")
	_, err = fm.run(t, "github_get_file", `{"repo":"octocat/Hello-World","path":"missing.txt"}`)
	toolstest.ToolError(t, err, false, "not found (HTTP 404)")
	before := len(f.log())
	_, err = fm.run(t, "github_get_file", `{"repo":"octocat/Hello-World","path":"../secrets"}`)
	toolstest.ToolError(t, err, false, "nothing was sent")
	if len(f.log()) != before {
		t.Fatal("a path with .. was sent")
	}
}

func TestSearchCode(t *testing.T) {
	f := newFakeGitHub(t)
	fm := newFamily(t, f)
	out := fm.mustRun(t, "github_search_code", `{"query":"addClass in:file language:js","limit":3}`)
	items := out["items"].([]any)
	if len(items) != 1 || out["dropped_outside_allow_list"] != 1.0 {
		t.Fatalf("items %v", out)
	}
	it := items[0].(map[string]any)
	if it["repo"] != "octocat/Hello-World" || it["path"] != "src/attributes/classes.js" || !strings.Contains(str(it["fragments"]), "addClass: function") {
		t.Fatalf("item %v", it)
	}
	got := f.log()
	if len(got) != 1 || !strings.HasPrefix(got[0], "GET /search/code?per_page=3&q=addClass+in%3Afile+language%3Ajs+repo%3Aoctocat%2Fhello-world+user%3Aacme") {
		t.Fatalf("requests %q", got)
	}
}

func TestListCommits(t *testing.T) {
	f := newFakeGitHub(t)
	fm := newFamily(t, f)
	out := fm.mustRun(t, "github_list_commits", `{"repo":"octocat/Hello-World","path":"README.md","since":"2011-01-01T00:00:00Z","limit":2}`)
	items := out["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("items %v", out)
	}
	first, second := items[0].(map[string]any), items[1].(map[string]any)
	if first["sha"] != "6dcb09b5b57875f334f61aebed695e2e4193db5e" || first["author"] != "octocat" || first["message"] != "Fix all the bugs" ||
		first["date"] != "2011-04-14T16:00:49Z" || second["author"] != "The Octocat" {
		t.Fatalf("commits %v", items)
	}
	if got := f.log(); len(got) != 1 || got[0] != "GET /repos/octocat/Hello-World/commits?path=README.md&per_page=2&since=2011-01-01T00%3A00%3A00Z" {
		t.Fatalf("requests %q", got)
	}
	_, err := fm.run(t, "github_list_commits", `{"repo":"octocat/Hello-World","since":"yesterday"}`)
	toolstest.ToolError(t, err, false, "not an RFC 3339 time", "nothing was sent")
	if len(f.log()) != 1 {
		t.Fatal("a bad since was sent")
	}
}

func TestGetChecks_FailuresFirst(t *testing.T) {
	f := newFakeGitHub(t)
	fm := newFamily(t, f)
	out := fm.mustRun(t, "github_get_checks", `{"repo":"octocat/Hello-World","ref":"feature/x"}`)
	runs := out["check_runs"].([]any)
	if len(runs) != 2 || runs[0].(map[string]any)["name"] != "test" || runs[0].(map[string]any)["conclusion"] != "failure" ||
		runs[1].(map[string]any)["title"] != "Mighty Readme report" {
		t.Fatalf("check runs %v", runs)
	}
	statuses := out["statuses"].([]any)
	if len(statuses) != 2 || statuses[0].(map[string]any)["context"] != "continuous-integration/jenkins" || out["sha"] != "6dcb09b5b57875f334f61aebed695e2e4193db5e" {
		t.Fatalf("statuses %v", out)
	}
	want := []string{
		"GET /repos/octocat/Hello-World/commits/feature/x/check-runs?per_page=100",
		"GET /repos/octocat/Hello-World/commits/feature/x/status?per_page=100",
	}
	if got := f.log(); str(got) != str(want) {
		t.Fatalf("requests %q, want %q", got, want)
	}
}

// TestOutput_CappedWithTruncatedFlag: a result over max_output_bytes is
// cut to fit, stays valid JSON and says so.
func TestOutput_CappedWithTruncatedFlag(t *testing.T) {
	f := newFakeGitHub(t)
	for n := range 40 {
		f.seed("acme/widgets", fakeIssue{title: fmt.Sprintf("Issue %d", n), body: strings.Repeat("é long body ", 50)})
	}
	fm := newFamily(t, f, func(c *Config) { c.MaxOutputBytes = 3000 })
	tool := fm["github_list_issues"]
	raw, err := tool.Run(context.Background(), tools.Call{Input: json.RawMessage(`{"repo":"acme/widgets","limit":40}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 3000 || !json.Valid(raw) {
		t.Fatalf("result of %d bytes (valid %v)", len(raw), json.Valid(raw))
	}
	out := decode(t, raw)
	items := out["items"].([]any)
	if out["truncated"] != true || len(items) == 0 || len(items) >= 40 || items[0].(map[string]any)["title"] != "Issue 39" {
		t.Fatalf("cut result: truncated %v, %d items", out["truncated"], len(items))
	}

	// A single long text is cut at its end instead.
	big := f.seed("acme/widgets", fakeIssue{title: "Long", body: strings.Repeat("ü", 7000)})
	raw, err = fm["github_get_issue"].Run(context.Background(), tools.Call{Input: json.RawMessage(fmt.Sprintf(`{"repo":"acme/widgets","number":%d}`, big.number))})
	if err != nil {
		t.Fatal(err)
	}
	out = decode(t, raw)
	if len(raw) > 3000 || out["truncated"] != true || !strings.HasSuffix(out["body"].(string), "ü…") || out["title"] != "Long" {
		t.Fatalf("cut issue (%d bytes): %v", len(raw), out)
	}
}
