package github

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	gh "github.com/google/go-github/v62/github"

	"brain/tools"
)

// latestComments is how many comments github_get_issue shows.
const latestComments = 10

// issueOut is an issue (or pull request, seen as an issue) as results show it.
type issueOut struct {
	Repo        string   `json:"repo,omitempty"`
	Number      int      `json:"number"`
	Title       string   `json:"title"`
	State       string   `json:"state"`
	StateReason string   `json:"state_reason,omitempty"`
	PullRequest bool     `json:"pull_request,omitempty"`
	Author      string   `json:"author,omitempty"`
	Labels      []string `json:"labels,omitempty"`
	Assignees   []string `json:"assignees,omitempty"`
	Milestone   string   `json:"milestone,omitempty"`
	Comments    int      `json:"comments"`
	CreatedAt   string   `json:"created_at,omitempty"`
	UpdatedAt   string   `json:"updated_at,omitempty"`
	ClosedAt    string   `json:"closed_at,omitempty"`
	URL         string   `json:"url,omitempty"`
	Body        string   `json:"body,omitempty"`
}

func issueOf(repo string, i *gh.Issue, bodyChars int, cut *bool) issueOut {
	out := issueOut{
		Repo:        repo,
		Number:      i.GetNumber(),
		Title:       i.GetTitle(),
		State:       i.GetState(),
		StateReason: i.GetStateReason(),
		PullRequest: i.IsPullRequest(),
		Author:      i.GetUser().GetLogin(),
		Milestone:   i.GetMilestone().GetTitle(),
		Comments:    i.GetComments(),
		CreatedAt:   stamp(i.GetCreatedAt().Time),
		UpdatedAt:   stamp(i.GetUpdatedAt().Time),
		ClosedAt:    stamp(i.GetClosedAt().Time),
		URL:         i.GetHTMLURL(),
		Body:        text(i.GetBody(), bodyChars, cut),
	}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	for _, a := range i.Assignees {
		out.Assignees = append(out.Assignees, a.GetLogin())
	}
	return out
}

type commentOut struct {
	ID        int64  `json:"id"`
	Author    string `json:"author,omitempty"`
	CreatedAt string `json:"created_at,omitempty"`
	URL       string `json:"url,omitempty"`
	Body      string `json:"body"`
}

func (c *client) readTools() []tools.Definition {
	return []tools.Definition{
		{
			Name: "github_get_issue",
			Description: "Read one GitHub issue or pull request (as an issue) with its latest comments, newest first. " +
				"Results are compact JSON; \"truncated\": true marks a result cut to fit.",
			Input: schema([]string{"repo", "number"}, repoProp, numberProp),
			Run:   c.getIssue,
		},
		{
			Name:        "github_list_issues",
			Description: "List a repository's issues (pull requests are marked pull_request: true), newest first, with body excerpts.",
			Input: schema([]string{"repo"}, repoProp,
				`"state":{"type":"string","enum":["open","closed","all"],"description":"default open"}`,
				labelsProp, limitProp),
			Run: c.listIssues,
		},
		{
			Name: "github_search_issues",
			Description: "Search issues and pull requests with GitHub search syntax (is:open label:bug ...). " +
				"The search is confined to the allowed repositories.",
			Input: schema([]string{"query"}, queryProp, limitProp),
			Run:   c.searchIssues,
		},
		{
			Name: "github_get_pull_request",
			Description: "Read a pull request: state, mergeable, branches, the files changed with additions/deletions, " +
				"each reviewer's latest review and a summary of the head commit's checks.",
			Input: schema([]string{"repo", "number"}, repoProp, numberProp),
			Run:   c.getPullRequest,
		},
		{
			Name:        "github_get_file",
			Description: "Read a text file from a repository at a ref (branch, tag or commit; default the default branch). Binary files and directories are refused.",
			Input: schema([]string{"repo", "path"}, repoProp,
				`"path":{"type":"string","minLength":1},"ref":{"type":"string"}`),
			Run: c.getFile,
		},
		{
			Name:        "github_search_code",
			Description: "Search code with GitHub code search syntax, confined to the allowed repositories; shows matching files with fragments.",
			Input:       schema([]string{"query"}, queryProp, limitProp),
			Run:         c.searchCode,
		},
		{
			Name:        "github_list_commits",
			Description: "List a repository's commits, newest first, optionally only those touching path or made since a time (RFC 3339).",
			Input: schema([]string{"repo"}, repoProp,
				`"path":{"type":"string"},"since":{"type":"string","description":"RFC 3339, e.g. 2026-01-31T00:00:00Z"},"ref":{"type":"string","description":"branch or commit to start from"}`,
				limitProp),
			Run: c.listCommits,
		},
		{
			Name:        "github_get_checks",
			Description: "Read the check runs and the combined commit status of a ref (branch, tag or commit).",
			Input:       schema([]string{"repo", "ref"}, repoProp, `"ref":{"type":"string","minLength":1}`),
			Run:         c.getChecks,
		},
	}
}

type issueArgs struct {
	Repo   string `json:"repo"`
	Number int    `json:"number"`
}

func (c *client) getIssue(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_get_issue"
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
	issue, err := c.issue(ctx, r, in.Number)
	if err != nil {
		return nil, err
	}
	comments, err := c.tailComments(ctx, r, issue, latestComments)
	if err != nil {
		return nil, err
	}
	out := struct {
		issueOut
		LatestComments []commentOut `json:"latest_comments,omitempty"`
		Truncated      bool         `json:"truncated,omitempty"`
	}{}
	out.issueOut = issueOf(r.String(), issue, maxBody, &out.Truncated)
	for _, cm := range slices.Backward(comments) {
		out.LatestComments = append(out.LatestComments, commentOut{
			ID: cm.GetID(), Author: cm.GetUser().GetLogin(), CreatedAt: stamp(cm.GetCreatedAt().Time),
			URL: cm.GetHTMLURL(), Body: text(cm.GetBody(), maxComment, &out.Truncated),
		})
	}
	return c.result(out)
}

// issue reads one issue.
func (c *client) issue(ctx context.Context, r repo, number int) (*gh.Issue, error) {
	var issue *gh.Issue
	err := c.call(ctx, fmt.Sprintf("read %s#%d", r, number), func(ctx context.Context) (resp *gh.Response, err error) {
		issue, resp, err = c.api.Issues.Get(ctx, r.owner, r.name, number)
		return resp, err
	})
	return issue, err
}

// tailComments reads up to n of the issue's last comments, oldest first.
// GitHub lists comments oldest first with no reverse order, so pages are
// read from the last one back (two at most: a page holds n).
func (c *client) tailComments(ctx context.Context, r repo, issue *gh.Issue, n int) ([]*gh.IssueComment, error) {
	total := issue.GetComments()
	if total == 0 {
		return nil, nil
	}
	per := min(n, 100)
	var out []*gh.IssueComment
	for page := (total + per - 1) / per; page >= 1 && len(out) < n; page-- {
		var got []*gh.IssueComment
		err := c.call(ctx, fmt.Sprintf("read the comments of %s#%d", r, issue.GetNumber()), func(ctx context.Context) (resp *gh.Response, err error) {
			got, resp, err = c.api.Issues.ListComments(ctx, r.owner, r.name, issue.GetNumber(),
				&gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{Page: page, PerPage: per}})
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		out = append(got, out...)
		if len(got) == 0 {
			break
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out, nil
}

func (c *client) listIssues(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_list_issues"
	var in struct {
		Repo   string   `json:"repo"`
		State  string   `json:"state"`
		Labels []string `json:"labels"`
		Limit  int      `json:"limit"`
	}
	if err := parseInput(tool, call.Input, &in); err != nil {
		return nil, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return nil, err
	}
	if in.State == "" {
		in.State = "open"
	}
	if !slices.Contains([]string{"open", "closed", "all"}, in.State) {
		return nil, tools.Failed("%s: state must be open, closed or all; nothing was sent", tool)
	}
	var issues []*gh.Issue
	err = c.call(ctx, "list the issues of "+r.String(), func(ctx context.Context) (resp *gh.Response, err error) {
		issues, resp, err = c.api.Issues.ListByRepo(ctx, r.owner, r.name, &gh.IssueListByRepoOptions{
			State: in.State, Labels: in.Labels, ListOptions: gh.ListOptions{PerPage: limitOf(in.Limit)},
		})
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	out := struct {
		Repo      string     `json:"repo"`
		State     string     `json:"state"`
		Items     []issueOut `json:"items"`
		Truncated bool       `json:"truncated,omitempty"`
	}{Repo: r.String(), State: in.State, Items: []issueOut{}}
	for _, i := range issues {
		out.Items = append(out.Items, issueOf("", i, maxExcerpt, &out.Truncated))
	}
	return c.result(out)
}

func (c *client) searchIssues(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_search_issues"
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := parseInput(tool, call.Input, &in); err != nil {
		return nil, err
	}
	q, err := c.repos.confine(tool, in.Query)
	if err != nil {
		return nil, err
	}
	var res *gh.IssuesSearchResult
	err = c.call(ctx, "search issues", func(ctx context.Context) (resp *gh.Response, err error) {
		res, resp, err = c.api.Search.Issues(ctx, q, &gh.SearchOptions{ListOptions: gh.ListOptions{PerPage: limitOf(in.Limit)}})
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	out := struct {
		Query      string     `json:"query"`
		TotalCount int        `json:"total_count"`
		Incomplete bool       `json:"incomplete_results,omitempty"`
		Items      []issueOut `json:"items"`
		Dropped    int        `json:"dropped_outside_allow_list,omitempty"`
		Truncated  bool       `json:"truncated,omitempty"`
	}{Query: q, TotalCount: res.GetTotal(), Incomplete: res.GetIncompleteResults(), Items: []issueOut{}}
	for _, i := range res.Issues {
		full := repoOfURL(i.GetRepositoryURL())
		if !c.repos.allows(full) {
			out.Dropped++
			continue
		}
		out.Items = append(out.Items, issueOf(full, i, maxExcerpt, &out.Truncated))
	}
	return c.result(out)
}
