package github

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"brain/internal/gittest"
	"brain/tools"
	"brain/tools/toolstest"
)

// proposeRig is a git host (git's own http-backend) holding acme/widgets,
// the GitHub fake, and a workspace holding a clone with one commit.
type proposeRig struct {
	git  *gittest.Server
	gh   *fakeGitHub
	fm   family
	ws   string
	base string // main on the host
	head string // the workspace's commit
}

const proposeInput = `{"repo":"acme/widgets","path":"/workspace/widgets","base":"main","title":"Fix the greeting","body":"Says fixed."}`

func newProposeRig(t *testing.T) *proposeRig {
	t.Helper()
	r := &proposeRig{git: gittest.New(t, "ghp_read_only", testToken), gh: newFakeGitHub(t), ws: t.TempDir()}
	r.base = r.git.Create(t, "acme/widgets", map[string]string{
		"main.go":   "package main\n\nfunc main() { println(\"hi\") }\n",
		"README.md": "widgets\n",
	})
	u := strings.Replace(r.git.URL, "http://", "http://x:"+testToken+"@", 1) + "/acme/widgets.git"
	gittest.Git(t, r.ws, "clone", "-q", u, "widgets")
	r.head = r.commit(t, "main.go", "package main\n\nfunc main() { println(\"fixed\") }\n", "Fix the greeting")
	r.fm = newFamily(t, r.gh, func(c *Config) {
		c.Workspace = func(string) string { return r.ws }
		c.GitURL = r.git.URL
	})
	return r
}

// commit writes a file in the workspace's clone and commits it.
func (r *proposeRig) commit(t *testing.T, name, content, msg string) string {
	t.Helper()
	dir := filepath.Join(r.ws, "widgets")
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", name)
	gittest.Git(t, dir, "commit", "-q", "-m", msg)
	return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
}

// hostRef is the commit a branch of the host's acme/widgets is at ("" if none).
func (r *proposeRig) hostRef(t *testing.T, branch string) string {
	t.Helper()
	out, err := os.ReadFile(filepath.Join(r.git.Root, "acme/widgets.git", "refs/heads", branch))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func (r *proposeRig) pushes() int {
	n := 0
	for _, q := range r.git.Requests() {
		if strings.HasPrefix(q, "POST /acme/widgets.git/git-receive-pack") {
			n++
		}
	}
	return n
}

func (r *proposeRig) apply(t *testing.T, card tools.Card) (map[string]any, error) {
	t.Helper()
	raw, err := r.fm[proposeTool].Apply(context.Background(), tools.Call{Input: json.RawMessage(proposeInput), SessionID: "s1", ToolCallID: "c1"},
		tools.Decision{ID: decision, By: "ann", Found: card.Found})
	if err != nil {
		return nil, err
	}
	return decode(t, raw), nil
}

func TestPropose_PreviewShowsTheDiffApplyPushesThoseCommitsAndOpensOnePR(t *testing.T) {
	r := newProposeRig(t)
	before := len(r.git.Requests()) // the test's own clone
	card, err := r.fm.preview(t, proposeTool, proposeInput)
	if err != nil {
		t.Fatal(err)
	}
	fs := facts(card)
	if card.Title != "Propose a pull request to acme/widgets: Fix the greeting" || fs["Repository"] != "acme/widgets" ||
		!strings.HasPrefix(fs["Commits"], "1: "+r.head[:7]+" Fix the greeting") ||
		!strings.HasPrefix(fs["Files changed"], "1 files, +1 −1: main.go") ||
		!strings.Contains(fs["main.go (+1 −1)"], "-func main() { println(\"hi\") }\n+func main() { println(\"fixed\") }") {
		t.Fatalf("card %+v", card)
	}
	if card.Found["head"] != r.head || card.Found["base"] != r.base || card.Found["paths"] != "main.go" {
		t.Fatalf("found %v", card.Found)
	}
	if !strings.Contains(card.Detail, "diff --git a/main.go b/main.go") || !strings.Contains(card.Detail, r.head) {
		t.Fatalf("detail %q", card.Detail)
	}
	if r.pushes() != 0 || r.gh.writes() != 0 {
		t.Fatal("the preview wrote")
	}
	for _, q := range r.git.Requests()[before:] {
		if !strings.HasSuffix(q, " write") && !strings.HasSuffix(q, " read") {
			t.Fatalf("the git host saw %q", q)
		}
	}

	// The model commits more after the preview: the approved commit is
	// what is pushed, not the workspace's new HEAD.
	later := r.commit(t, "README.md", "widgets, now with a later change\n", "A later change")
	out, err := r.apply(t, card)
	if err != nil {
		t.Fatal(err)
	}
	if out["created"] != true || out["pushed"] != true || out["branch"] != "brain/"+decision || out["head"] != r.head {
		t.Fatalf("apply %v", out)
	}
	if got := r.hostRef(t, "brain/"+decision); got != r.head || got == later {
		t.Fatalf("branch at %q, want the approved %s", got, r.head)
	}
	prs := r.gh.issues("acme/widgets")
	if len(prs) != 1 || !prs[0].pull || prs[0].head != "brain/"+decision || prs[0].base != "main" ||
		!strings.Contains(prs[0].body, marker(decision)) || !strings.HasPrefix(prs[0].body, "Says fixed.") {
		t.Fatalf("pull requests %+v", prs)
	}

	// A retry (the first answer lost) pushes nothing and opens nothing.
	out, err = r.apply(t, card)
	if err != nil {
		t.Fatal(err)
	}
	if out["created"] != false || out["pushed"] != false || out["number"] != float64(prs[0].number) {
		t.Fatalf("retry %v", out)
	}
	if r.pushes() != 1 || len(r.gh.issues("acme/widgets")) != 1 {
		t.Fatalf("%d pushes, %d pull requests after a retry", r.pushes(), len(r.gh.issues("acme/widgets")))
	}
}

// The pull request's answer is lost: the apply's outcome is unknown, and a
// retry finds the branch and the pull request and creates neither again.
func TestPropose_LostAnswerThenRetryCreatesNothingTwice(t *testing.T) {
	r := newProposeRig(t)
	card, err := r.fm.preview(t, proposeTool, proposeInput)
	if err != nil {
		t.Fatal(err)
	}
	r.gh.mu.Lock()
	r.gh.dropNext = true
	r.gh.mu.Unlock()
	_, err = r.apply(t, card)
	toolstest.ToolError(t, err, true, "")
	if len(r.gh.issues("acme/widgets")) != 1 || r.pushes() != 1 {
		t.Fatal("the first attempt did not create the pull request")
	}
	out, err := r.apply(t, card)
	if err != nil {
		t.Fatal(err)
	}
	if out["created"] != false || out["pushed"] != false || len(r.gh.issues("acme/widgets")) != 1 || r.pushes() != 1 {
		t.Fatalf("retry %v: %d pull requests, %d pushes", out, len(r.gh.issues("acme/widgets")), r.pushes())
	}
}

func TestPropose_Refusals(t *testing.T) {
	r := newProposeRig(t)
	card, err := r.fm.preview(t, proposeTool, proposeInput)
	if err != nil {
		t.Fatal(err)
	}

	// The branch exists at another commit: nothing is pushed or opened.
	gittest.Git(t, filepath.Join(r.ws, "widgets"), "push", "-q", "origin", r.base+":refs/heads/brain/"+decision)
	if _, err := r.apply(t, card); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("apply onto a taken branch: %v", err)
	}
	if r.pushes() != 1 || len(r.gh.issues("acme/widgets")) != 0 { // the one push is the test's own
		t.Fatalf("%d pushes, %d pull requests", r.pushes(), len(r.gh.issues("acme/widgets")))
	}

	// No recorded commits: refused before anything is sent.
	if _, err := r.fm[proposeTool].Apply(context.Background(), tools.Call{Input: json.RawMessage(proposeInput), SessionID: "s1"},
		tools.Decision{ID: decision}); err == nil || !strings.Contains(err.Error(), "does not hold the commits") {
		t.Fatalf("apply without found: %v", err)
	}

	// main moved on the host past what the workspace has.
	up := t.TempDir()
	gittest.Git(t, up, "clone", "-q", filepath.Join(r.git.Root, "acme/widgets.git"), "w")
	if err := os.WriteFile(filepath.Join(up, "w", "NEW"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, filepath.Join(up, "w"), "add", "NEW")
	gittest.Git(t, filepath.Join(up, "w"), "commit", "-qm", "moved")
	gittest.Git(t, filepath.Join(up, "w"), "push", "-q", "origin", "main")
	if _, err := r.fm.preview(t, proposeTool, proposeInput); err == nil || !strings.Contains(err.Error(), "git fetch origin main") {
		t.Fatalf("preview against a moved base: %v", err)
	}

	for name, input := range map[string]string{
		"no repository": `{"repo":"acme/widgets","path":"/workspace/nothing","base":"main","title":"x"}`,
		"off the list":  `{"repo":"evil/widgets","path":"/workspace/widgets","base":"main","title":"x"}`,
		"bad base":      `{"repo":"acme/widgets","path":"/workspace/widgets","base":"-main..x","title":"x"}`,
		"no base":       `{"repo":"acme/widgets","path":"/workspace/widgets","base":"gone","title":"x"}`,
	} {
		if _, err := r.fm.preview(t, proposeTool, input); err == nil {
			t.Errorf("%s: preview succeeded", name)
		}
	}
	for _, q := range r.git.Requests() {
		if strings.Contains(q, "git-receive-pack") && strings.HasPrefix(q, "POST") && strings.HasSuffix(q, " read") {
			t.Fatalf("pushed with a read token: %q", q)
		}
	}
}

// Without workspaces (no sandbox configured) the tool is not offered.
func TestPropose_OnlyWithWorkspaces(t *testing.T) {
	fm := newFamily(t, newFakeGitHub(t))
	if fm[proposeTool] != nil {
		t.Fatal("github_propose_change offered without a sandbox")
	}
}
