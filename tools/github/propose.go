package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"

	"brain/internal/gitrepo"
	"brain/tools"
)

// github_propose_change publishes commits an agent made in its sandbox
// workspace, once a person approves the exact diff. The preview reads the
// workspace's git objects from outside the sandbox (gitrepo: nothing of
// the workspace's config runs), asks the git host where the base branch
// is, and records the commit ids in the card's Found; apply pushes
// exactly those commits to a branch named from the decision id, with a
// write token the sandbox never sees, then opens the pull request.
//
// Exactly once: the branch name comes from the decision id and the push
// only creates it (old value zero), so a retry finds the branch at the
// recorded commit and pushes nothing; the pull request carries the
// decision's marker and a retry finds it among those from that branch.

const proposeTool = "github_propose_change"

// proposeTimeout bounds preview and apply: copying a workspace's objects
// and pushing a pack take longer than an API call.
const proposeTimeout = 5 * time.Minute

// Card bounds: files whose patch the card quotes, lines of each.
const (
	cardFiles      = 5
	cardPatchLines = 12
	maxFoundPaths  = 16 << 10
)

// branchRef is a base branch name as git allows it (a subset).
var branchRef = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$`)

type proposeArgs struct {
	Repo  string `json:"repo"`
	Path  string `json:"path"`
	Base  string `json:"base"`
	Title string `json:"title"`
	Body  string `json:"body"`
	Draft bool   `json:"draft"`
}

func (c *client) proposeTool() tools.Definition {
	return tools.Definition{
		Name: proposeTool,
		Description: "Propose publishing the commits of a git repository in your sandbox workspace as a pull request. " +
			"Commit your change in the workspace first (sandbox_exec: git commit); the card shows the exact diff against base. " +
			"It waits for a person's approval; nothing is pushed until they approve, and then brain pushes the commits you proposed " +
			"(not later ones) to a new branch and opens the pull request.",
		Input: schema([]string{"repo", "path", "base", "title"}, repoProp,
			`"path":{"type":"string","minLength":1,"maxLength":1000,"description":"the repository's directory in the workspace, e.g. /workspace/widgets"}`,
			`"base":{"type":"string","minLength":1,"maxLength":200,"description":"the branch the pull request goes into, e.g. main"}`,
			`"title":{"type":"string","minLength":1,"maxLength":256}`,
			`"body":{"type":"string","maxLength":60000,"description":"the pull request's description"}`,
			`"draft":{"type":"boolean"}`),
		Timeout: proposeTimeout,
		Preview: c.previewPropose,
		Apply:   c.applyPropose,
	}
}

func (c *client) proposeArgs(input json.RawMessage) (proposeArgs, repo, error) {
	var in proposeArgs
	if err := parseInput(proposeTool, input, &in); err != nil {
		return in, repo{}, err
	}
	r, err := c.repos.check(proposeTool, in.Repo)
	if err != nil {
		return in, repo{}, err
	}
	in.Base = strings.TrimPrefix(strings.TrimSpace(in.Base), "refs/heads/")
	if !branchRef.MatchString(in.Base) || strings.Contains(in.Base, "..") || strings.HasSuffix(in.Base, ".lock") || strings.HasSuffix(in.Base, "/") {
		return in, repo{}, tools.Failed("%s: base %q is not a branch name; nothing was sent", proposeTool, in.Base)
	}
	if strings.TrimSpace(in.Title) == "" {
		return in, repo{}, tools.Failed("%s: title is empty; nothing was sent", proposeTool)
	}
	return in, r, nil
}

// snapshot copies the session's repository at path out of its workspace.
func (c *client) snapshot(ctx context.Context, sessionID, path string) (*gitrepo.Snapshot, error) {
	ws := c.workspace(sessionID)
	snap, err := gitrepo.Take(ctx, ws, path, "")
	if err != nil {
		if errors.Is(err, gitrepo.ErrNotRepository) {
			return nil, tools.Failed("%s: %s in the workspace is not a git repository (clone it with sandbox_exec first); nothing was sent", proposeTool, path)
		}
		return nil, tools.Failed("%s: could not read the repository at %s in the workspace: %v; nothing was sent", proposeTool, path, err)
	}
	return snap, nil
}

// remote is the repository on the git host, authenticated with a token of
// permission perm ("read" or "write") scoped to it.
func (c *client) remote(ctx context.Context, r repo, perm string) (gitrepo.Remote, error) {
	var tok string
	var err error
	if perm == "write" {
		tok, err = c.tokens.WriteToken(ctx, r.String())
	} else {
		tok, err = c.tokens.scoped(ctx, r.String(), "read")
	}
	if err != nil {
		return gitrepo.Remote{}, tools.Misconfigured("no "+perm+" token for the git host",
			"%s: could not get a %s token for %s: %s; nothing was sent", proposeTool, perm, r, c.secrets.scrubber().String(err.Error()))
	}
	return gitrepo.Remote{URL: c.gitURL + "/" + r.owner + "/" + r.name + ".git", User: "x-access-token", Password: tok, Client: c.git}, nil
}

func (c *client) previewPropose(ctx context.Context, call tools.Call) (tools.Card, error) {
	in, r, err := c.proposeArgs(call.Input)
	if err != nil {
		return tools.Card{}, err
	}
	snap, err := c.snapshot(ctx, call.SessionID, in.Path)
	if err != nil {
		return tools.Card{}, err
	}
	defer snap.Close()
	head, err := snap.Resolve(ctx, "HEAD")
	if err != nil {
		return tools.Card{}, tools.Failed("%s: the repository at %s has no commit checked out; nothing was sent", proposeTool, in.Path)
	}
	rem, err := c.remote(ctx, r, "read")
	if err != nil {
		return tools.Card{}, err
	}
	refs, err := rem.Refs(ctx, gitrepo.UploadPack)
	if err != nil {
		return tools.Card{}, tools.Failed("%s: could not read the branches of %s: %s", proposeTool, r, c.secrets.scrubber().String(err.Error()))
	}
	base, ok := refs["refs/heads/"+in.Base]
	if !ok {
		return tools.Card{}, tools.Failed("%s: %s has no branch %q", proposeTool, r, in.Base)
	}
	if !snap.HasCommit(ctx, base) {
		return tools.Card{}, tools.Failed("%s: %s is at %s on the git host, which the workspace does not have: run `git fetch origin %s` "+
			"(and rebase on it if needed) in %s, then propose again", proposeTool, in.Base, base[:12], in.Base, in.Path)
	}
	mb, err := snap.MergeBase(ctx, base, head)
	if err != nil {
		return tools.Card{}, tools.Failed("%s: the commit checked out at %s shares no history with %s of %s", proposeTool, in.Path, in.Base, r)
	}
	commits, n, err := snap.Commits(ctx, base, head, maxCardCommits)
	if err != nil {
		return tools.Card{}, tools.Failed("%s: %v", proposeTool, err)
	}
	if n == 0 {
		return tools.Card{}, tools.Failed("%s: HEAD of %s has no commits that %s lacks: commit the change first", proposeTool, in.Path, in.Base)
	}
	files, patch, err := snap.Diff(ctx, mb, head)
	if err != nil {
		return tools.Card{}, tools.Failed("%s: %v", proposeTool, err)
	}
	return proposeCard(in, r, head, base, commits, n, files, patch), nil
}

// proposeCard is the card: the change in facts (the first lines of each
// file's patch), the whole diff as its Detail, and the commit ids in Found.
func proposeCard(in proposeArgs, r repo, head, base string, commits []gitrepo.Commit, n int, files []gitrepo.FileChange, patch string) tools.Card {
	var list []string
	for _, cm := range commits {
		list = append(list, shortSHA(cm.ID)+" "+clip(cm.Subject, 80))
	}
	if n > len(commits) {
		list = append(list, fmt.Sprintf("and %d more", n-len(commits)))
	}
	ins, del := 0, 0
	var paths []string
	for _, f := range files {
		ins, del = ins+max(f.Insertions, 0), del+max(f.Deletions, 0)
		paths = append(paths, f.Path)
	}
	allPaths := strings.Join(paths, "\n")
	if len(allPaths) > maxFoundPaths {
		allPaths = allPaths[:maxFoundPaths] // policies see the first paths; the card says how many
	}
	facts := []tools.Fact{
		{Label: "Repository", Value: r.String()},
		{Label: "Branches", Value: "a new branch brain/<decision id> → " + in.Base + " (at " + shortSHA(base) + ")"},
		{Label: "Commits", Value: fmt.Sprintf("%d: %s", n, strings.Join(list, "; "))},
		{Label: "Files changed", Value: fmt.Sprintf("%d files, +%d −%d: %s", len(files), ins, del, clip(strings.Join(paths, ", "), 1500))},
		{Label: "Description", Value: excerpt(in.Body)},
	}
	for i, f := range files {
		if i == cardFiles {
			facts = append(facts, tools.Fact{Label: "More", Value: fmt.Sprintf("%d more files: the whole diff is on the approval's page in brain", len(files)-cardFiles)})
			break
		}
		label := fmt.Sprintf("%s (+%d −%d)", f.Path, f.Insertions, f.Deletions)
		if f.Insertions < 0 {
			label = f.Path + " (binary)"
		}
		facts = append(facts, tools.Fact{Label: clip(label, 80), Value: hunkHead(f.Patch)})
	}
	draft := ""
	if in.Draft {
		draft = " (draft)"
	}
	var detail strings.Builder
	fmt.Fprintf(&detail, "%s → %s of %s, %d commits%s\n", shortSHA(head), in.Base, r, n, draft)
	for _, cm := range commits {
		fmt.Fprintf(&detail, "  %s %s\n", cm.ID, cm.Subject)
	}
	detail.WriteString("\n" + patch)
	return tools.Card{
		Title:  fmt.Sprintf("Propose a pull request to %s: %s", r, in.Title),
		Facts:  facts,
		Detail: detail.String(),
		Found:  map[string]string{"head": head, "base": base, "paths": allPaths, "commits": fmt.Sprint(n)},
	}
}

// hunkHead is the first lines of a file's patch from its first hunk on.
func hunkHead(patch string) string {
	var out []string
	started := false
	for line := range strings.Lines(patch) {
		if strings.HasPrefix(line, "@@") || strings.HasPrefix(line, "Binary files") {
			started = true
		}
		if !started {
			continue
		}
		if len(out) == cardPatchLines {
			out = append(out, "…")
			break
		}
		out = append(out, clip(strings.TrimRight(line, "\n"), 160))
	}
	if len(out) == 0 {
		return "(mode or name change only)"
	}
	return strings.Join(out, "\n")
}

// proposal is what apply reports.
type proposal struct {
	Created bool   `json:"created"`
	Pushed  bool   `json:"pushed"`
	Repo    string `json:"repo"`
	Branch  string `json:"branch"`
	Head    string `json:"head"`
	Number  int    `json:"number"`
	URL     string `json:"url"`
	Note    string `json:"note,omitempty"`
}

// branchOf is the branch an approval's commits are pushed to.
func branchOf(decisionID string) string {
	return "brain/" + strings.Map(func(r rune) rune {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '-'
	}, decisionID)
}

func (c *client) applyPropose(ctx context.Context, call tools.Call, d tools.Decision) (json.RawMessage, error) {
	in, r, err := c.proposeArgs(call.Input)
	if err != nil {
		return nil, err
	}
	if err := checkDecision(proposeTool, d); err != nil {
		return nil, err
	}
	head, base := d.Found["head"], d.Found["base"]
	if !gitrepo.IsCommitID(head) || !gitrepo.IsCommitID(base) {
		return nil, tools.Failed("%s: the approval does not hold the commits its preview recorded; nothing was pushed", proposeTool)
	}
	branch := branchOf(d.ID)
	pushed, err := c.push(ctx, call, in, r, branch, head, base)
	if err != nil {
		return nil, err
	}
	out := proposal{Pushed: pushed, Repo: r.String(), Branch: branch, Head: head}
	var existing []*gh.PullRequest
	err = c.call(ctx, "look for an earlier attempt in "+r.String(), func(ctx context.Context) (resp *gh.Response, err error) {
		existing, resp, err = c.api.PullRequests.List(ctx, r.owner, r.name, &gh.PullRequestListOptions{
			State: "all", Head: r.owner + ":" + branch, Base: in.Base, ListOptions: gh.ListOptions{PerPage: markerSearch},
		})
		return resp, err
	})
	if err != nil {
		return nil, noCheck(err)
	}
	for _, pr := range existing {
		if strings.Contains(pr.GetBody(), marker(d.ID)) {
			out.Number, out.URL, out.Note = pr.GetNumber(), pr.GetHTMLURL(), foundNote
			return c.result(out)
		}
	}
	var pr *gh.PullRequest
	err = c.call(ctx, "open a pull request in "+r.String(), func(ctx context.Context) (resp *gh.Response, err error) {
		pr, resp, err = c.api.PullRequests.Create(ctx, r.owner, r.name, &gh.NewPullRequest{
			Title: gh.String(in.Title), Head: gh.String(branch), Base: gh.String(in.Base),
			Body: gh.String(stamped(in.Body, d.ID)), Draft: gh.Bool(in.Draft),
		})
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	out.Created, out.Number, out.URL = true, pr.GetNumber(), pr.GetHTMLURL()
	return c.result(out)
}

// push creates branch at head on the git host unless an earlier attempt
// did; it reports whether this attempt pushed.
func (c *client) push(ctx context.Context, call tools.Call, in proposeArgs, r repo, branch, head, base string) (bool, error) {
	ref := "refs/heads/" + branch
	rem, err := c.remote(ctx, r, "write")
	if err != nil {
		return false, err
	}
	scrub := c.secrets.scrubber()
	refs, err := rem.Refs(ctx, gitrepo.ReceivePack)
	if err != nil {
		return false, tools.Failed("%s: could not read the branches of %s: %s; nothing was pushed", proposeTool, r, scrub.String(err.Error()))
	}
	switch at, ok := refs[ref]; {
	case ok && at == head:
		return false, nil // an earlier attempt of this approval pushed it
	case ok:
		return false, tools.Failed("%s: %s already exists in %s at %s, not at the approved %s; nothing was pushed", proposeTool, branch, r, shortSHA(at), shortSHA(head))
	}
	snap, err := c.snapshot(ctx, call.SessionID, in.Path)
	if err != nil {
		return false, err
	}
	defer snap.Close()
	if !snap.HasCommit(ctx, head) {
		return false, tools.Failed("%s: the approved commit %s is no longer in the workspace's repository at %s; nothing was pushed", proposeTool, shortSHA(head), in.Path)
	}
	haves := []string{base}
	for _, id := range refs {
		if len(haves) == 256 {
			break
		}
		haves = append(haves, id)
	}
	pack, err := snap.Pack(ctx, head, haves)
	if err != nil {
		return false, tools.Failed("%s: could not pack the commits: %v; nothing was pushed", proposeTool, err)
	}
	if err := rem.Create(ctx, ref, head, pack); err != nil {
		return false, &tools.Error{Message: fmt.Sprintf("%s: %s", proposeTool, scrub.String(err.Error())), UnknownOutcome: errors.Is(err, gitrepo.ErrUnknownOutcome)}
	}
	return true, nil
}
