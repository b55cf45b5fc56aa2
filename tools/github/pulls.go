package github

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"brain/tools"
)

// maxPRFiles is how many changed files github_get_pull_request lists.
const maxPRFiles = 100

func (c *client) getPullRequest(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_get_pull_request"
	var in issueArgs
	if err := parseInput(tool, call.Input, &in); err != nil {
		return nil, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return nil, err
	}
	if in.Number < 1 {
		return nil, tools.Failed("%s: number must be >= 1; nothing was sent", tool)
	}
	op := fmt.Sprintf("read pull request %s#%d", r, in.Number)
	var pr *gh.PullRequest
	var files []*gh.CommitFile
	var reviews []*gh.PullRequestReview
	err = c.call(ctx, op, func(ctx context.Context) (resp *gh.Response, err error) {
		pr, resp, err = c.api.PullRequests.Get(ctx, r.owner, r.name, in.Number)
		return resp, err
	})
	if err == nil {
		err = c.call(ctx, op+" files", func(ctx context.Context) (resp *gh.Response, err error) {
			files, resp, err = c.api.PullRequests.ListFiles(ctx, r.owner, r.name, in.Number, &gh.ListOptions{PerPage: maxPRFiles})
			return resp, err
		})
	}
	if err == nil {
		err = c.call(ctx, op+" reviews", func(ctx context.Context) (resp *gh.Response, err error) {
			reviews, resp, err = c.api.PullRequests.ListReviews(ctx, r.owner, r.name, in.Number, &gh.ListOptions{PerPage: 100})
			return resp, err
		})
	}
	if err != nil {
		return nil, err
	}
	runs, status, err := c.checks(ctx, r, pr.GetHead().GetSHA())
	if err != nil {
		return nil, err
	}
	type fileOut struct {
		Path      string `json:"path"`
		Status    string `json:"status"`
		Additions int    `json:"additions"`
		Deletions int    `json:"deletions"`
		From      string `json:"previous_path,omitempty"`
	}
	out := struct {
		Repo           string            `json:"repo"`
		Number         int               `json:"number"`
		Title          string            `json:"title"`
		State          string            `json:"state"`
		Draft          bool              `json:"draft"`
		Merged         bool              `json:"merged"`
		Mergeable      *bool             `json:"mergeable"` // null: GitHub is still computing it
		MergeableState string            `json:"mergeable_state,omitempty"`
		Author         string            `json:"author,omitempty"`
		Head           string            `json:"head"`
		HeadSHA        string            `json:"head_sha"`
		Base           string            `json:"base"`
		Commits        int               `json:"commits"`
		Additions      int               `json:"additions"`
		Deletions      int               `json:"deletions"`
		ChangedFiles   int               `json:"changed_files"`
		Reviews        map[string]string `json:"reviews"` // reviewer -> latest state
		Requested      []string          `json:"review_requested,omitempty"`
		Checks         checksSummary     `json:"checks"`
		URL            string            `json:"url"`
		Body           string            `json:"body,omitempty"`
		Files          []fileOut         `json:"files"`
		Truncated      bool              `json:"truncated,omitempty"`
	}{
		Repo: r.String(), Number: pr.GetNumber(), Title: pr.GetTitle(), State: pr.GetState(),
		Draft: pr.GetDraft(), Merged: pr.GetMerged(), Mergeable: pr.Mergeable, MergeableState: pr.GetMergeableState(),
		Author: pr.GetUser().GetLogin(), Head: pr.GetHead().GetLabel(), HeadSHA: pr.GetHead().GetSHA(), Base: pr.GetBase().GetRef(),
		Commits: pr.GetCommits(), Additions: pr.GetAdditions(), Deletions: pr.GetDeletions(), ChangedFiles: pr.GetChangedFiles(),
		Reviews: latestReviews(reviews), Checks: summarize(runs, status), URL: pr.GetHTMLURL(), Files: []fileOut{},
	}
	out.Body = text(pr.GetBody(), maxBody, &out.Truncated)
	for _, u := range pr.RequestedReviewers {
		out.Requested = append(out.Requested, u.GetLogin())
	}
	for _, f := range files {
		out.Files = append(out.Files, fileOut{Path: f.GetFilename(), Status: f.GetStatus(),
			Additions: f.GetAdditions(), Deletions: f.GetDeletions(), From: f.GetPreviousFilename()})
	}
	if len(files) < out.ChangedFiles {
		out.Truncated = true
	}
	return c.result(out)
}

// latestReviews is each reviewer's standing review, as GitHub shows it:
// a later comment does not undo an approval or a request for changes.
func latestReviews(reviews []*gh.PullRequestReview) map[string]string {
	out := map[string]string{}
	for _, rv := range reviews {
		who, state := rv.GetUser().GetLogin(), rv.GetState()
		if who == "" || state == "PENDING" {
			continue
		}
		if prev := out[who]; state == "COMMENTED" && prev != "" && prev != "COMMENTED" {
			continue
		}
		out[who] = state
	}
	return out
}

// maxCardCommits is how many of the commits ahead the approval card lists.
const maxCardCommits = 5

type createPRArgs struct {
	Repo  string `json:"repo"`
	Head  string `json:"head"`
	Base  string `json:"base"`
	Title string `json:"title"`
	Body  string `json:"body"`
	Draft bool   `json:"draft"`
}

func (c *client) createPRArgs(tool string, input json.RawMessage) (createPRArgs, repo, error) {
	var in createPRArgs
	if err := parseInput(tool, input, &in); err != nil {
		return in, repo{}, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return in, repo{}, err
	}
	in.Head, in.Base = strings.TrimSpace(in.Head), strings.TrimSpace(in.Base)
	if in.Head == "" || in.Base == "" || strings.TrimSpace(in.Title) == "" {
		return in, repo{}, tools.Failed("%s: head, base and title are required; nothing was sent", tool)
	}
	return in, r, nil
}

// headFilter is head as the pull request list filters it: owner:branch.
func headFilter(r repo, head string) string {
	if strings.Contains(head, ":") {
		return head
	}
	return r.owner + ":" + head
}

func (c *client) previewCreatePR(ctx context.Context, call tools.Call) (tools.Card, error) {
	const tool = "github_create_pull_request"
	in, r, err := c.createPRArgs(tool, call.Input)
	if err != nil {
		return tools.Card{}, err
	}
	var cmp *gh.CommitsComparison
	err = c.call(ctx, fmt.Sprintf("compare %s...%s in %s", in.Base, in.Head, r), func(ctx context.Context) (resp *gh.Response, err error) {
		cmp, resp, err = c.api.Repositories.CompareCommits(ctx, r.owner, r.name, in.Base, in.Head, &gh.ListOptions{PerPage: 100})
		return resp, err
	})
	if err != nil {
		return tools.Card{}, err
	}
	if cmp.GetAheadBy() == 0 {
		return tools.Card{}, tools.Failed("%s: %s has no commits ahead of %s in %s; there is nothing to open a pull request for", tool, in.Head, in.Base, r)
	}
	var commits []string
	for _, cm := range cmp.Commits {
		if len(commits) == maxCardCommits {
			commits = append(commits, fmt.Sprintf("and %d more", cmp.GetAheadBy()-maxCardCommits))
			break
		}
		msg, _, _ := strings.Cut(cm.GetCommit().GetMessage(), "\n")
		commits = append(commits, shortSHA(cm.GetSHA())+" "+clip(msg, 80))
	}
	draft := "no"
	if in.Draft {
		draft = "yes"
	}
	return tools.Card{
		Title: fmt.Sprintf("Open pull request in %s: %s", r, in.Title),
		Facts: []tools.Fact{
			{Label: "Repository", Value: r.String()},
			{Label: "Branches", Value: in.Head + " → " + in.Base},
			{Label: "Commits ahead", Value: fmt.Sprintf("%d: %s", cmp.GetAheadBy(), strings.Join(commits, "; "))},
			{Label: "Files changed", Value: fmt.Sprint(len(cmp.Files))},
			{Label: "Draft", Value: draft},
			{Label: "Title", Value: in.Title},
			{Label: "Body", Value: excerpt(in.Body)},
		},
	}, nil
}

func shortSHA(s string) string { return s[:min(len(s), 7)] }

func (c *client) applyCreatePR(ctx context.Context, call tools.Call, d tools.Decision) (json.RawMessage, error) {
	const tool = "github_create_pull_request"
	in, r, err := c.createPRArgs(tool, call.Input)
	if err != nil {
		return nil, err
	}
	if err := checkDecision(tool, d); err != nil {
		return nil, err
	}
	var existing []*gh.PullRequest
	err = c.call(ctx, "look for an earlier attempt in "+r.String(), func(ctx context.Context) (resp *gh.Response, err error) {
		existing, resp, err = c.api.PullRequests.List(ctx, r.owner, r.name, &gh.PullRequestListOptions{
			State: "all", Head: headFilter(r, in.Head), Base: in.Base, ListOptions: gh.ListOptions{PerPage: markerSearch},
		})
		return resp, err
	})
	if err != nil {
		return nil, noCheck(err)
	}
	for _, pr := range existing {
		if strings.Contains(pr.GetBody(), marker(d.ID)) {
			return c.result(created{Repo: r.String(), Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Note: foundNote})
		}
	}
	var pr *gh.PullRequest
	err = c.call(ctx, "open a pull request in "+r.String(), func(ctx context.Context) (resp *gh.Response, err error) {
		pr, resp, err = c.api.PullRequests.Create(ctx, r.owner, r.name, &gh.NewPullRequest{
			Title: gh.String(in.Title), Head: gh.String(in.Head), Base: gh.String(in.Base),
			Body: gh.String(stamped(in.Body, d.ID)), Draft: gh.Bool(in.Draft),
		})
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	return c.result(created{Created: true, Repo: r.String(), Number: pr.GetNumber(), URL: pr.GetHTMLURL()})
}
