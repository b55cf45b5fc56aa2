package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	gh "github.com/google/go-github/v62/github"

	"brain/tools"
)

// maxFileBytes is the largest file github_get_file reads: GitHub's
// contents API returns content only up to 1 MiB.
const maxFileBytes = 1 << 20

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

// checksSummary counts a commit's check runs by outcome, with its combined
// commit status.
type checksSummary struct {
	Total     int            `json:"total"`
	ByOutcome map[string]int `json:"by_outcome"` // a conclusion, or the status while not completed
	Status    string         `json:"combined_status"`
	Statuses  int            `json:"statuses"`
}

func summarize(runs *gh.ListCheckRunsResults, status *gh.CombinedStatus) checksSummary {
	s := checksSummary{Total: runs.GetTotal(), ByOutcome: map[string]int{}, Status: status.GetState(), Statuses: status.GetTotalCount()}
	for _, run := range runs.CheckRuns {
		s.ByOutcome[outcome(run)]++
	}
	return s
}

func outcome(run *gh.CheckRun) string {
	if run.GetStatus() == "completed" && run.GetConclusion() != "" {
		return run.GetConclusion()
	}
	return run.GetStatus()
}

// checks reads a ref's check runs and combined status.
func (c *client) checks(ctx context.Context, r repo, ref string) (*gh.ListCheckRunsResults, *gh.CombinedStatus, error) {
	var runs *gh.ListCheckRunsResults
	var status *gh.CombinedStatus
	err := c.call(ctx, fmt.Sprintf("read the check runs of %s@%s", r, ref), func(ctx context.Context) (resp *gh.Response, err error) {
		runs, resp, err = c.api.Checks.ListCheckRunsForRef(ctx, r.owner, r.name, ref, &gh.ListCheckRunsOptions{ListOptions: gh.ListOptions{PerPage: 100}})
		return resp, err
	})
	if err != nil {
		return nil, nil, err
	}
	err = c.call(ctx, fmt.Sprintf("read the combined status of %s@%s", r, ref), func(ctx context.Context) (resp *gh.Response, err error) {
		status, resp, err = c.api.Repositories.GetCombinedStatus(ctx, r.owner, r.name, ref, &gh.ListOptions{PerPage: 100})
		return resp, err
	})
	return runs, status, err
}

func (c *client) getChecks(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_get_checks"
	var in struct {
		Repo string `json:"repo"`
		Ref  string `json:"ref"`
	}
	if err := parseInput(tool, call.Input, &in); err != nil {
		return nil, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Ref) == "" {
		return nil, tools.Failed("%s: ref is required; nothing was sent", tool)
	}
	runs, status, err := c.checks(ctx, r, in.Ref)
	if err != nil {
		return nil, err
	}
	type runOut struct {
		Name        string `json:"name"`
		Status      string `json:"status"`
		Conclusion  string `json:"conclusion,omitempty"`
		Title       string `json:"title,omitempty"`
		Summary     string `json:"summary,omitempty"`
		StartedAt   string `json:"started_at,omitempty"`
		CompletedAt string `json:"completed_at,omitempty"`
		URL         string `json:"url,omitempty"`
	}
	type statusOut struct {
		Context     string `json:"context"`
		State       string `json:"state"`
		Description string `json:"description,omitempty"`
		URL         string `json:"url,omitempty"`
	}
	out := struct {
		Repo      string        `json:"repo"`
		Ref       string        `json:"ref"`
		SHA       string        `json:"sha,omitempty"`
		Summary   checksSummary `json:"summary"`
		CheckRuns []runOut      `json:"check_runs"`
		Statuses  []statusOut   `json:"statuses"`
		Truncated bool          `json:"truncated,omitempty"`
	}{Repo: r.String(), Ref: in.Ref, SHA: status.GetSHA(), Summary: summarize(runs, status), CheckRuns: []runOut{}, Statuses: []statusOut{}}
	// Failures first: they are what a reader looks for.
	sorted := slices.Clone(runs.CheckRuns)
	slices.SortStableFunc(sorted, func(a, b *gh.CheckRun) int { return rank(a) - rank(b) })
	for _, run := range sorted {
		out.CheckRuns = append(out.CheckRuns, runOut{
			Name: run.GetName(), Status: run.GetStatus(), Conclusion: run.GetConclusion(),
			Title: run.GetOutput().GetTitle(), Summary: text(run.GetOutput().GetSummary(), maxExcerpt, &out.Truncated),
			StartedAt: stamp(run.GetStartedAt().Time), CompletedAt: stamp(run.GetCompletedAt().Time), URL: run.GetHTMLURL(),
		})
	}
	for _, s := range status.Statuses {
		out.Statuses = append(out.Statuses, statusOut{Context: s.GetContext(), State: s.GetState(), Description: s.GetDescription(), URL: s.GetTargetURL()})
	}
	if len(runs.CheckRuns) < runs.GetTotal() {
		out.Truncated = true
	}
	return c.result(out)
}

// rank orders check runs: failing, then running, then the rest.
func rank(run *gh.CheckRun) int {
	switch outcome(run) {
	case "failure", "timed_out", "action_required", "cancelled", "startup_failure":
		return 0
	case "queued", "in_progress", "waiting", "requested", "pending":
		return 1
	}
	return 2
}

func (c *client) getFile(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_get_file"
	var in struct {
		Repo string `json:"repo"`
		Path string `json:"path"`
		Ref  string `json:"ref"`
	}
	if err := parseInput(tool, call.Input, &in); err != nil {
		return nil, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return nil, err
	}
	p := strings.Trim(in.Path, "/")
	if p == "" || strings.Contains(p, "..") {
		return nil, tools.Failed("%s: path %q is empty or holds \"..\"; nothing was sent", tool, in.Path)
	}
	op := fmt.Sprintf("read %s in %s", p, r)
	var file *gh.RepositoryContent
	var dir []*gh.RepositoryContent
	err = c.call(ctx, op, func(ctx context.Context) (resp *gh.Response, err error) {
		file, dir, resp, err = c.api.Repositories.GetContents(ctx, r.owner, r.name, p, &gh.RepositoryContentGetOptions{Ref: in.Ref})
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	if file == nil {
		names := make([]string, 0, len(dir))
		for _, e := range dir {
			n := e.GetName()
			if e.GetType() == "dir" {
				n += "/"
			}
			names = append(names, n)
		}
		return nil, tools.Failed("%s: %s is a directory, not a file; it holds: %s", op, p, clip(strings.Join(names, ", "), maxComment))
	}
	if file.GetType() != "file" {
		return nil, tools.Failed("%s: %s is a %s, not a file", op, p, file.GetType())
	}
	if file.GetSize() > maxFileBytes || file.GetEncoding() == "none" {
		return nil, tools.Failed("%s: the file is %d bytes, over the %d-byte limit of this tool", op, file.GetSize(), maxFileBytes)
	}
	content, err := file.GetContent()
	if err != nil {
		return nil, tools.Failed("%s: GitHub's answer holds no readable content: %v", op, err)
	}
	head := []byte(content[:min(len(content), 8000)])
	if bytes.IndexByte(head, 0) >= 0 || !utf8.ValidString(content) {
		return nil, tools.Failed("%s: %s is a binary file (%d bytes); only text files can be read", op, p, file.GetSize())
	}
	out := struct {
		Repo      string `json:"repo"`
		Path      string `json:"path"`
		Ref       string `json:"ref,omitempty"`
		SHA       string `json:"sha"`
		Size      int    `json:"size"`
		URL       string `json:"url,omitempty"`
		Content   string `json:"content"`
		Truncated bool   `json:"truncated,omitempty"`
	}{Repo: r.String(), Path: file.GetPath(), Ref: in.Ref, SHA: file.GetSHA(), Size: file.GetSize(), URL: file.GetHTMLURL(), Content: content}
	return c.result(out)
}

func (c *client) searchCode(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_search_code"
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
	var res *gh.CodeSearchResult
	err = c.call(ctx, "search code", func(ctx context.Context) (resp *gh.Response, err error) {
		res, resp, err = c.api.Search.Code(ctx, q, &gh.SearchOptions{TextMatch: true, ListOptions: gh.ListOptions{PerPage: limitOf(in.Limit)}})
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	type itemOut struct {
		Repo      string   `json:"repo"`
		Path      string   `json:"path"`
		URL       string   `json:"url,omitempty"`
		Fragments []string `json:"fragments,omitempty"`
	}
	out := struct {
		Query      string    `json:"query"`
		TotalCount int       `json:"total_count"`
		Incomplete bool      `json:"incomplete_results,omitempty"`
		Items      []itemOut `json:"items"`
		Dropped    int       `json:"dropped_outside_allow_list,omitempty"`
		Truncated  bool      `json:"truncated,omitempty"`
	}{Query: q, TotalCount: res.GetTotal(), Incomplete: res.GetIncompleteResults(), Items: []itemOut{}}
	for _, it := range res.CodeResults {
		full := it.GetRepository().GetFullName()
		if !c.repos.allows(full) {
			out.Dropped++
			continue
		}
		item := itemOut{Repo: full, Path: it.GetPath(), URL: it.GetHTMLURL()}
		for _, m := range it.TextMatches {
			item.Fragments = append(item.Fragments, text(m.GetFragment(), maxExcerpt, &out.Truncated))
		}
		out.Items = append(out.Items, item)
	}
	return c.result(out)
}

func (c *client) listCommits(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	const tool = "github_list_commits"
	var in struct {
		Repo  string `json:"repo"`
		Path  string `json:"path"`
		Since string `json:"since"`
		Ref   string `json:"ref"`
		Limit int    `json:"limit"`
	}
	if err := parseInput(tool, call.Input, &in); err != nil {
		return nil, err
	}
	r, err := c.repos.check(tool, in.Repo)
	if err != nil {
		return nil, err
	}
	opts := &gh.CommitsListOptions{SHA: in.Ref, Path: in.Path, ListOptions: gh.ListOptions{PerPage: limitOf(in.Limit)}}
	if in.Since != "" {
		if opts.Since, err = time.Parse(time.RFC3339, in.Since); err != nil {
			return nil, tools.Failed("%s: since %q is not an RFC 3339 time such as 2026-01-31T00:00:00Z; nothing was sent", tool, in.Since)
		}
	}
	var commits []*gh.RepositoryCommit
	err = c.call(ctx, "list the commits of "+r.String(), func(ctx context.Context) (resp *gh.Response, err error) {
		commits, resp, err = c.api.Repositories.ListCommits(ctx, r.owner, r.name, opts)
		return resp, err
	})
	if err != nil {
		return nil, err
	}
	type commitOut struct {
		SHA     string `json:"sha"`
		Author  string `json:"author,omitempty"`
		Date    string `json:"date,omitempty"`
		Message string `json:"message"`
		URL     string `json:"url,omitempty"`
	}
	out := struct {
		Repo      string      `json:"repo"`
		Path      string      `json:"path,omitempty"`
		Items     []commitOut `json:"items"`
		Truncated bool        `json:"truncated,omitempty"`
	}{Repo: r.String(), Path: in.Path, Items: []commitOut{}}
	for _, cm := range commits {
		author := cm.GetAuthor().GetLogin()
		if author == "" {
			author = cm.GetCommit().GetAuthor().GetName()
		}
		out.Items = append(out.Items, commitOut{
			SHA: cm.GetSHA(), Author: author, Date: stamp(cm.GetCommit().GetAuthor().GetDate().Time),
			Message: text(cm.GetCommit().GetMessage(), maxExcerpt, &out.Truncated), URL: cm.GetHTMLURL(),
		})
	}
	return c.result(out)
}
