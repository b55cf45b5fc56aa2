package linear

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"brain/engine"
)

// A delegated issue that ends in a pull request: when an approval's apply
// opened one (its output names a pull request URL), the pull request is
// attached to the agent session's issue and the issue moves to the state
// configured for review. Both are idempotent on Linear's side (an
// attachment's url is its unique key; setting a state twice leaves it
// set), so the deliverer's retries of the event change nothing twice.

const (
	opAgentSession   = "agentSession"
	opWorkflowStates = "workflowStates"
	opAttachment     = "attachmentCreate"

	agentSessionQuery = `query AgentSession($id: String!) {
  agentSession(id: $id) { id issue { id identifier team { id } } }
}`
	workflowStatesQuery = `query WorkflowStates($team: ID!) {
  workflowStates(first: 250, filter: { team: { id: { eq: $team } } }) { nodes { id name type position } }
}`
	attachmentCreateMutation = `mutation AttachmentCreate($input: AttachmentCreateInput!) {
  attachmentCreate(input: $input) { success attachment { id } }
}`
)

// pullURL is a pull request's web address on GitHub or GitHub Enterprise.
var pullURL = regexp.MustCompile(`^https?://[^/\s]+/[^/\s]+/[^/\s]+/pull/[0-9]+$`)

// SessionIssue is the issue an agent session works on.
type SessionIssue struct {
	ID, Identifier, TeamID string
}

// WorkflowState is one state of a team's workflow.
type WorkflowState struct {
	ID, Name, Type string
	Position       float64
}

// AgentSessionIssue reads the issue an agent session works on; ok is
// false for a session on no issue (a mention in a document, say).
func (c *Client) AgentSessionIssue(ctx context.Context, agentSessionID string) (is SessionIssue, ok bool, err error) {
	data, err := c.query(ctx, opAgentSession, agentSessionQuery, map[string]any{"id": agentSessionID})
	if err != nil {
		return SessionIssue{}, false, err
	}
	var raw struct {
		Issue *struct {
			ID         string `json:"id"`
			Identifier string `json:"identifier"`
			Team       struct {
				ID string `json:"id"`
			} `json:"team"`
		} `json:"issue"`
	}
	if err := json.Unmarshal(data[opAgentSession], &raw); err != nil {
		return SessionIssue{}, false, &APIError{Op: opAgentSession, Status: http.StatusOK, Message: "unreadable agent session: " + err.Error()}
	}
	if raw.Issue == nil || raw.Issue.ID == "" {
		return SessionIssue{}, false, nil
	}
	return SessionIssue{ID: raw.Issue.ID, Identifier: raw.Issue.Identifier, TeamID: raw.Issue.Team.ID}, true, nil
}

// TeamStates lists a team's workflow states.
func (c *Client) TeamStates(ctx context.Context, teamID string) ([]WorkflowState, error) {
	data, err := c.query(ctx, opWorkflowStates, workflowStatesQuery, map[string]any{"team": teamID})
	if err != nil {
		return nil, err
	}
	var raw struct {
		Nodes []WorkflowState `json:"nodes"`
	}
	if err := json.Unmarshal(data[opWorkflowStates], &raw); err != nil {
		return nil, &APIError{Op: opWorkflowStates, Status: http.StatusOK, Message: "unreadable workflow states: " + err.Error()}
	}
	return raw.Nodes, nil
}

// Attach links url to an issue, titled; attaching the same url again
// updates the one attachment.
func (c *Client) Attach(ctx context.Context, issueID, url, title, subtitle string) error {
	input := map[string]any{"issueId": issueID, "url": url, "title": title}
	if subtitle != "" {
		input["subtitle"] = subtitle
	}
	return c.call(ctx, opAttachment, attachmentCreateMutation, map[string]any{"input": input})
}

// PullRequest is what an applied approval reports of the pull request it
// opened, read from its output ({url, number, repo}).
type PullRequest struct {
	URL    string `json:"url"`
	Number int    `json:"number"`
	Repo   string `json:"repo"`
}

// AppliedPullRequest reads the pull request an applied approval opened;
// ok is false when its output names none.
func AppliedPullRequest(d engine.ApplySucceeded) (PullRequest, bool) {
	var pr PullRequest
	if len(d.Output) == 0 || json.Unmarshal(d.Output, &pr) != nil || !pullURL.MatchString(pr.URL) {
		return PullRequest{}, false
	}
	return pr, true
}

// findState picks the state named by want (its id, or its name in any
// case) among a team's states.
func findState(states []WorkflowState, want string) (WorkflowState, bool) {
	for _, st := range states {
		if st.ID == want {
			return st, true
		}
	}
	for _, st := range states {
		if strings.EqualFold(strings.TrimSpace(st.Name), strings.TrimSpace(want)) {
			return st, true
		}
	}
	return WorkflowState{}, false
}

// permanent reports whether err is an answer Linear will give again (an
// invalid input, a missing entity): retrying the delivery cannot help.
func permanent(err error) bool {
	ae, ok := errors.AsType[*APIError](err)
	return ok && !ae.temporary() && !IsAuthError(err)
}

// linkPullRequest attaches pr to the agent session's issue and moves the
// issue to reviewState ("" leaves it). It returns what happened, in words
// for the session's thought; an error is one worth retrying.
func (r *Renderer) linkPullRequest(ctx context.Context, c *Client, agentSession string, a engine.Approval, pr PullRequest) (string, error) {
	is, ok, err := c.AgentSessionIssue(ctx, agentSession)
	switch {
	case permanent(err):
		return "Could not read this session's issue to link the pull request: " + err.Error() + ".", nil
	case err != nil:
		return "", err
	case !ok:
		return "", nil // not on an issue: nothing to link
	}
	title := fmt.Sprintf("Pull request %s#%d", pr.Repo, pr.Number)
	if pr.Repo == "" || pr.Number == 0 {
		title = "Pull request"
	}
	subtitle := clipText(oneLine(a.Card.Title), 200)
	if err := c.Attach(ctx, is.ID, pr.URL, title, subtitle); permanent(err) {
		return fmt.Sprintf("Could not attach the pull request to %s: %s.", is.Identifier, err), nil
	} else if err != nil {
		return "", err
	}
	if err := c.AddExternalURL(ctx, agentSession, "Pull request", pr.URL); err != nil && !permanent(err) {
		return "", err
	}
	note := fmt.Sprintf("Attached %s to %s.", pr.URL, is.Identifier)
	if r.ReviewState == "" {
		return note, nil
	}
	states, err := c.TeamStates(ctx, is.TeamID)
	switch {
	case permanent(err):
		return note + " Could not read the team's workflow states: " + err.Error() + ".", nil
	case err != nil:
		return "", err
	}
	st, ok := findState(states, r.ReviewState)
	if !ok {
		return note + fmt.Sprintf(" The team has no workflow state %q (linear.review_state), so %s stays where it is.", r.ReviewState, is.Identifier), nil
	}
	if err := c.UpdateIssue(ctx, is.ID, st.ID, ""); permanent(err) {
		return note + fmt.Sprintf(" Could not move %s to %s: %s.", is.Identifier, st.Name, err), nil
	} else if err != nil {
		return "", err
	}
	return note + fmt.Sprintf(" Moved %s to %s.", is.Identifier, st.Name), nil
}
