package github

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"brain/tools"
)

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
			{Label: "Body", Value: clip(strings.TrimSpace(in.Body), maxCardBody)},
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
