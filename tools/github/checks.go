package github

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"brain/tools"
)

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
