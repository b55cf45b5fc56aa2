package linear

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Issue is what brain reads of a Linear issue: enough to comment on it and
// to follow Linear's delegation conventions.
type Issue struct {
	ID         string
	Identifier string // "ENG-123"
	StateType  string // triage, backlog, unstarted, started, completed, canceled
	DelegateID string // "" when no agent is its delegate
	// StartedStateID is the team's first state of type started (by
	// position), "" when the team has none.
	StartedStateID string
}

// NotStarted reports whether the issue is in a state before work began.
func (i Issue) NotStarted() bool {
	switch i.StateType {
	case "triage", "backlog", "unstarted":
		return true
	}
	return false
}

const (
	opIssue         = "issue"
	opIssueUpdate   = "issueUpdate"
	opCommentCreate = "commentCreate"

	issueQuery = `query Issue($id: String!) {
  issue(id: $id) {
    id
    identifier
    state { id type }
    delegate { id }
    team { states(filter: { type: { eq: "started" } }) { nodes { id position } } }
  }
}`
	issueUpdateMutation = `mutation IssueUpdate($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) { success }
}`
	commentCreateMutation = `mutation CommentCreate($input: CommentCreateInput!) {
  commentCreate(input: $input) { success comment { id } }
}`
)

// Issue reads an issue by id or identifier ("ENG-123").
func (c *Client) Issue(ctx context.Context, idOrIdentifier string) (Issue, error) {
	data, err := c.query(ctx, opIssue, issueQuery, map[string]any{"id": idOrIdentifier})
	if err != nil {
		return Issue{}, err
	}
	var raw struct {
		ID         string `json:"id"`
		Identifier string `json:"identifier"`
		State      struct {
			Type string `json:"type"`
		} `json:"state"`
		Delegate *struct {
			ID string `json:"id"`
		} `json:"delegate"`
		Team struct {
			States struct {
				Nodes []struct {
					ID       string  `json:"id"`
					Position float64 `json:"position"`
				} `json:"nodes"`
			} `json:"states"`
		} `json:"team"`
	}
	if json.Unmarshal(data[opIssue], &raw) != nil || raw.ID == "" {
		return Issue{}, &APIError{Op: opIssue, Status: http.StatusOK, Message: "issue " + idOrIdentifier + " not found"}
	}
	is := Issue{ID: raw.ID, Identifier: raw.Identifier, StateType: raw.State.Type}
	if raw.Delegate != nil {
		is.DelegateID = raw.Delegate.ID
	}
	nodes := raw.Team.States.Nodes
	sort.SliceStable(nodes, func(a, b int) bool { return nodes[a].Position < nodes[b].Position })
	if len(nodes) > 0 {
		is.StartedStateID = nodes[0].ID
	}
	return is, nil
}

// UpdateIssue sets an issue's state and/or delegate ("" leaves either as
// it is).
func (c *Client) UpdateIssue(ctx context.Context, issueID, stateID, delegateID string) error {
	input := map[string]any{}
	if stateID != "" {
		input["stateId"] = stateID
	}
	if delegateID != "" {
		input["delegateId"] = delegateID
	}
	if len(input) == 0 {
		return nil
	}
	return c.call(ctx, opIssueUpdate, issueUpdateMutation, map[string]any{"id": issueID, "input": input})
}

// Comment posts a comment on an issue with a client-chosen id (a UUID v4):
// Linear keeps one comment per id, so a retry never posts it twice.
func (c *Client) Comment(ctx context.Context, id, issueID, body string) error {
	if strings.TrimSpace(body) == "" {
		return fmt.Errorf("linear comment: %w", ErrEmptyBody)
	}
	if !validActivityID(id) {
		return fmt.Errorf("linear comment id %q is not a UUID v4", id)
	}
	err := c.call(ctx, opCommentCreate, commentCreateMutation, map[string]any{"input": map[string]any{"id": id, "issueId": issueID, "body": body}})
	if ae, ok := errors.AsType[*APIError](err); ok && strings.Contains(strings.ToLower(ae.Message), "already exists") {
		return nil // an earlier try got through; the answer was lost
	}
	return err
}
