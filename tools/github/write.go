package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"brain/tools"
)

// Exactly once. GitHub has no idempotency keys, so an apply stamps its
// decision id into the body of what it creates, as a hidden HTML comment,
// and before creating looks for an item already carrying it: an earlier
// attempt whose answer was lost (the approval left unconfirmed, then
// retried) is found and reported instead of being created twice. Labels
// and closing are idempotent by nature and need no marker.

// marker is the stamp for a decision.
func marker(decisionID string) string { return "<!-- brain:decision=" + decisionID + " -->" }

// decisionID is what a marker may hold: it must not end the HTML comment.
var decisionID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// stamped is body with the decision's marker; a marker the body already
// held (copied from elsewhere) is dropped so it cannot be mistaken for one.
func stamped(body, id string) string {
	body = strings.TrimSpace(markerText.ReplaceAllString(body, ""))
	if body == "" {
		return marker(id)
	}
	return body + "\n\n" + marker(id)
}

// markerSearch bounds the look for an earlier attempt: the items created
// most recently, or the comments written last.
const markerSearch = 100

// maxCardBody is how much of a body the approval card quotes.
const maxCardBody = 500

func (c *client) writeTools() []tools.Definition {
	const approval = " It waits for a person's approval; nothing is written until they approve."
	return []tools.Definition{
		{
			Name:        "github_create_issue",
			Description: "Propose a new issue in an allowed repository." + approval,
			Input: schema([]string{"repo", "title"}, repoProp,
				`"title":{"type":"string","minLength":1,"maxLength":256}`,
				`"body":{"type":"string","maxLength":60000}`, labelsProp),
			Preview: c.previewCreateIssue,
			Apply:   c.applyCreateIssue,
		},
		{
			Name:        "github_comment",
			Description: "Propose a comment on an issue or pull request." + approval,
			Input: schema([]string{"repo", "number", "body"}, repoProp, numberProp,
				`"body":{"type":"string","minLength":1,"maxLength":60000}`),
			Preview: c.previewComment,
			Apply:   c.applyComment,
		},
		{
			Name:        "github_add_labels",
			Description: "Propose adding labels to an issue or pull request (labels already there are kept)." + approval,
			Input: schema([]string{"repo", "number", "labels"}, repoProp, numberProp,
				`"labels":{"type":"array","items":{"type":"string","minLength":1,"maxLength":100},"minItems":1,"maxItems":50}`),
			Preview: c.previewAddLabels,
			Apply:   c.applyAddLabels,
		},
		{
			Name:        "github_close_issue",
			Description: "Propose closing an issue (or pull request) as completed or not planned." + approval,
			Input: schema([]string{"repo", "number"}, repoProp, numberProp,
				`"reason":{"type":"string","enum":["completed","not_planned"],"description":"default completed"}`),
			Preview: c.previewClose,
			Apply:   c.applyClose,
		},
		{
			Name:        "github_create_pull_request",
			Description: "Propose opening a pull request from head (a branch, or owner:branch for a fork) into base." + approval,
			Input: schema([]string{"repo", "head", "base", "title"}, repoProp,
				`"head":{"type":"string","minLength":1}`, `"base":{"type":"string","minLength":1}`,
				`"title":{"type":"string","minLength":1,"maxLength":256}`,
				`"body":{"type":"string","maxLength":60000}`, `"draft":{"type":"boolean"}`),
			Preview: c.previewCreatePR,
			Apply:   c.applyCreatePR,
		},
	}
}

// checkDecision refuses a decision id a marker cannot hold.
func checkDecision(tool string, d tools.Decision) error {
	if !decisionID.MatchString(d.ID) {
		return tools.Failed("%s: the decision id is missing or not usable as a marker; nothing was sent", tool)
	}
	return nil
}

// created is what a create reports, whether it created or found the item.
type created struct {
	Created bool   `json:"created"`
	Repo    string `json:"repo"`
	Number  int    `json:"number,omitempty"`
	ID      int64  `json:"id,omitempty"`
	URL     string `json:"url"`
	Note    string `json:"note,omitempty"`
}

const foundNote = "An earlier attempt of this approval already created it (found by its marker); nothing new was created."

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

func target(i *gh.Issue) string {
	kind := "issue"
	if i.IsPullRequest() {
		kind = "pull request"
	}
	return fmt.Sprintf("#%d %s (%s, %s)", i.GetNumber(), i.GetTitle(), kind, i.GetState())
}

func labelNames(ls []*gh.Label) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.GetName())
	}
	return out
}

// --- github_create_issue

type createIssueArgs struct {
	Repo   string   `json:"repo"`
	Title  string   `json:"title"`
	Body   string   `json:"body"`
	Labels []string `json:"labels"`
}

func (c *client) createIssueArgs(tool string, input json.RawMessage) (createIssueArgs, repo, error) {
	var in createIssueArgs
	if err := parseInput(tool, input, &in); err != nil {
		return in, repo{}, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return in, repo{}, err
	}
	if strings.TrimSpace(in.Title) == "" {
		return in, repo{}, tools.Failed("%s: title is empty; nothing was sent", tool)
	}
	return in, r, nil
}

func (c *client) previewCreateIssue(ctx context.Context, call tools.Call) (tools.Card, error) {
	const tool = "github_create_issue"
	in, r, err := c.createIssueArgs(tool, call.Input)
	if err != nil {
		return tools.Card{}, err
	}
	var info *gh.Repository
	err = c.call(ctx, "read repository "+r.String(), func(ctx context.Context) (resp *gh.Response, err error) {
		info, resp, err = c.api.Repositories.Get(ctx, r.owner, r.name)
		return resp, err
	})
	if err != nil {
		return tools.Card{}, err
	}
	if info.HasIssues != nil && !info.GetHasIssues() {
		return tools.Card{}, tools.Failed("%s: %s has issues turned off", tool, r)
	}
	return tools.Card{
		Title: fmt.Sprintf("Create issue in %s: %s", r, in.Title),
		Facts: []tools.Fact{
			{Label: "Repository", Value: info.GetFullName()},
			{Label: "Title", Value: in.Title},
			{Label: "Labels", Value: orNone(in.Labels)},
			{Label: "Body", Value: excerpt(in.Body)},
		},
	}, nil
}

func (c *client) applyCreateIssue(ctx context.Context, call tools.Call, d tools.Decision) (json.RawMessage, error) {
	const tool = "github_create_issue"
	in, r, err := c.createIssueArgs(tool, call.Input)
	if err != nil {
		return nil, err
	}
	if err := checkDecision(tool, d); err != nil {
		return nil, err
	}
	var recent []*gh.Issue
	err = c.call(ctx, "look for an earlier attempt in "+r.String(), func(ctx context.Context) (resp *gh.Response, err error) {
		recent, resp, err = c.api.Issues.ListByRepo(ctx, r.owner, r.name, &gh.IssueListByRepoOptions{
			State: "all", Sort: "created", Direction: "desc", ListOptions: gh.ListOptions{PerPage: markerSearch},
		})
		return resp, err
	})
	if err != nil {
		return nil, noCheck(err)
	}
	for _, i := range recent {
		if strings.Contains(i.GetBody(), marker(d.ID)) {
			return c.result(created{Repo: r.String(), Number: i.GetNumber(), URL: i.GetHTMLURL(), Note: foundNote})
		}
	}
	req := &gh.IssueRequest{Title: gh.String(in.Title), Body: gh.String(stamped(in.Body, d.ID))}
	if len(in.Labels) > 0 {
		req.Labels = &in.Labels
	}
	var issue *gh.Issue
	err = c.call(ctx, "create an issue in "+r.String(), func(ctx context.Context) (resp *gh.Response, err error) {
		issue, resp, err = c.api.Issues.Create(ctx, r.owner, r.name, req)
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	return c.result(created{Created: true, Repo: r.String(), Number: issue.GetNumber(), URL: issue.GetHTMLURL()})
}

// noCheck is the error when the look for an earlier attempt failed: this
// attempt wrote nothing, but cannot rule out that an earlier one did.
func noCheck(err error) error {
	te, ok := err.(*tools.Error)
	if !ok {
		return err
	}
	return tools.Failed("%s. Nothing was written by this attempt; an earlier attempt of this approval, if any, was not checked", te.Message)
}

// --- github_comment

type commentArgs struct {
	Repo   string `json:"repo"`
	Number int    `json:"number"`
	Body   string `json:"body"`
}

func (c *client) commentArgs(tool string, input json.RawMessage) (commentArgs, repo, error) {
	var in commentArgs
	if err := parseInput(tool, input, &in); err != nil {
		return in, repo{}, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return in, repo{}, err
	}
	if in.Number < 1 {
		return in, repo{}, tools.Failed("%s: number must be >= 1; nothing was sent", tool)
	}
	if strings.TrimSpace(markerText.ReplaceAllString(in.Body, "")) == "" {
		return in, repo{}, tools.Failed("%s: body is empty; nothing was sent", tool)
	}
	return in, r, nil
}

func (c *client) previewComment(ctx context.Context, call tools.Call) (tools.Card, error) {
	in, r, err := c.commentArgs("github_comment", call.Input)
	if err != nil {
		return tools.Card{}, err
	}
	issue, err := c.issue(ctx, r, in.Number)
	if err != nil {
		return tools.Card{}, err
	}
	return tools.Card{
		Title: fmt.Sprintf("Comment on %s#%d", r, in.Number),
		Facts: []tools.Fact{
			{Label: "Repository", Value: r.String()},
			{Label: "On", Value: target(issue)},
			{Label: "Comment", Value: excerpt(in.Body)},
		},
	}, nil
}

func (c *client) applyComment(ctx context.Context, call tools.Call, d tools.Decision) (json.RawMessage, error) {
	const tool = "github_comment"
	in, r, err := c.commentArgs(tool, call.Input)
	if err != nil {
		return nil, err
	}
	if err := checkDecision(tool, d); err != nil {
		return nil, err
	}
	issue, err := c.issue(ctx, r, in.Number)
	if err != nil {
		return nil, noCheck(err)
	}
	tail, err := c.tailComments(ctx, r, issue, markerSearch)
	if err != nil {
		return nil, noCheck(err)
	}
	for _, cm := range tail {
		if strings.Contains(cm.GetBody(), marker(d.ID)) {
			return c.result(created{Repo: r.String(), Number: in.Number, ID: cm.GetID(), URL: cm.GetHTMLURL(), Note: foundNote})
		}
	}
	var cm *gh.IssueComment
	err = c.call(ctx, fmt.Sprintf("comment on %s#%d", r, in.Number), func(ctx context.Context) (resp *gh.Response, err error) {
		cm, resp, err = c.api.Issues.CreateComment(ctx, r.owner, r.name, in.Number, &gh.IssueComment{Body: gh.String(stamped(in.Body, d.ID))})
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	return c.result(created{Created: true, Repo: r.String(), Number: in.Number, ID: cm.GetID(), URL: cm.GetHTMLURL()})
}

// --- github_add_labels

type labelsArgs struct {
	Repo   string   `json:"repo"`
	Number int      `json:"number"`
	Labels []string `json:"labels"`
}

func (c *client) labelsArgs(tool string, input json.RawMessage) (labelsArgs, repo, error) {
	var in labelsArgs
	if err := parseInput(tool, input, &in); err != nil {
		return in, repo{}, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return in, repo{}, err
	}
	if in.Number < 1 || len(in.Labels) == 0 {
		return in, repo{}, tools.Failed("%s: number (>= 1) and at least one label are required; nothing was sent", tool)
	}
	return in, r, nil
}

func (c *client) previewAddLabels(ctx context.Context, call tools.Call) (tools.Card, error) {
	in, r, err := c.labelsArgs("github_add_labels", call.Input)
	if err != nil {
		return tools.Card{}, err
	}
	issue, err := c.issue(ctx, r, in.Number)
	if err != nil {
		return tools.Card{}, err
	}
	return tools.Card{
		Title: fmt.Sprintf("Add labels to %s#%d", r, in.Number),
		Facts: []tools.Fact{
			{Label: "On", Value: target(issue)},
			{Label: "Add", Value: orNone(in.Labels)},
			{Label: "Has now", Value: orNone(labelNames(issue.Labels))},
		},
	}, nil
}

func (c *client) applyAddLabels(ctx context.Context, call tools.Call, _ tools.Decision) (json.RawMessage, error) {
	in, r, err := c.labelsArgs("github_add_labels", call.Input)
	if err != nil {
		return nil, err
	}
	var labels []*gh.Label
	err = c.call(ctx, fmt.Sprintf("add labels to %s#%d", r, in.Number), func(ctx context.Context) (resp *gh.Response, err error) {
		// go-github's AddLabelsToIssue sends a bare array, which GitHub's
		// description does not define: send the {"labels": [...]} it does.
		req, err := c.api.NewRequest(http.MethodPost, fmt.Sprintf("repos/%s/%s/issues/%d/labels", r.owner, r.name, in.Number),
			struct {
				Labels []string `json:"labels"`
			}{in.Labels})
		if err != nil {
			return nil, err
		}
		return c.api.Do(ctx, req, &labels)
	})
	if err != nil {
		return nil, err
	}
	return c.result(struct {
		Repo   string   `json:"repo"`
		Number int      `json:"number"`
		Labels []string `json:"labels"`
		Note   string   `json:"note"`
	}{r.String(), in.Number, labelNames(labels),
		"Adding labels is idempotent: a label already there stays as it is, so doing it again changes nothing."})
}

// --- github_close_issue

type closeArgs struct {
	Repo   string `json:"repo"`
	Number int    `json:"number"`
	Reason string `json:"reason"`
}

func (c *client) closeArgs(tool string, input json.RawMessage) (closeArgs, repo, error) {
	var in closeArgs
	if err := parseInput(tool, input, &in); err != nil {
		return in, repo{}, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return in, repo{}, err
	}
	if in.Reason == "" {
		in.Reason = "completed"
	}
	if in.Number < 1 || (in.Reason != "completed" && in.Reason != "not_planned") {
		return in, repo{}, tools.Failed("%s: number (>= 1) is required and reason must be completed or not_planned; nothing was sent", tool)
	}
	return in, r, nil
}

func (c *client) previewClose(ctx context.Context, call tools.Call) (tools.Card, error) {
	in, r, err := c.closeArgs("github_close_issue", call.Input)
	if err != nil {
		return tools.Card{}, err
	}
	issue, err := c.issue(ctx, r, in.Number)
	if err != nil {
		return tools.Card{}, err
	}
	return tools.Card{
		Title: fmt.Sprintf("Close %s#%d as %s", r, in.Number, strings.ReplaceAll(in.Reason, "_", " ")),
		Facts: []tools.Fact{
			{Label: "Issue", Value: target(issue)},
			{Label: "Reason", Value: in.Reason},
		},
	}, nil
}

func (c *client) applyClose(ctx context.Context, call tools.Call, _ tools.Decision) (json.RawMessage, error) {
	in, r, err := c.closeArgs("github_close_issue", call.Input)
	if err != nil {
		return nil, err
	}
	var issue *gh.Issue
	err = c.call(ctx, fmt.Sprintf("close %s#%d", r, in.Number), func(ctx context.Context) (resp *gh.Response, err error) {
		issue, resp, err = c.api.Issues.Edit(ctx, r.owner, r.name, in.Number, &gh.IssueRequest{State: gh.String("closed"), StateReason: gh.String(in.Reason)})
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	return c.result(struct {
		Repo        string `json:"repo"`
		Number      int    `json:"number"`
		State       string `json:"state"`
		StateReason string `json:"state_reason,omitempty"`
		URL         string `json:"url"`
		Note        string `json:"note"`
	}{r.String(), in.Number, issue.GetState(), issue.GetStateReason(), issue.GetHTMLURL(),
		"Closing is idempotent: an issue already closed stays closed, so doing it again changes nothing."})
}

// excerpt is a body as the approval card quotes it.
func excerpt(body string) string {
	body = strings.TrimSpace(markerText.ReplaceAllString(body, ""))
	if body == "" {
		return "(empty)"
	}
	return clip(body, maxCardBody)
}
