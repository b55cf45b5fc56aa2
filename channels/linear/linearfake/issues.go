package linearfake

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// Issue is an issue the fake serves to the issue query, updates with
// issueUpdate and comments on with commentCreate.
type Issue struct {
	ID, Identifier string
	// Organization is the workspace it belongs to: only that workspace's
	// tokens (and the static token) see it.
	Organization string
	StateID      string
	StateType    string
	DelegateID   string
	// Started are the team's states of type started, [id, position].
	Started []State
	// Team is the issue's team (its workflow states: AddTeam), "" for
	// none; Sessions are the agent sessions working on it.
	Team     string
	Sessions []string
}

// State is a workflow state of an issue's team.
type State struct {
	ID       string
	Position float64
}

// Comment is a comment the fake recorded.
type Comment struct {
	ID, IssueID, Body string
}

// AddIssue adds or replaces an issue.
func (s *Server) AddIssue(is Issue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.issues == nil {
		s.issues = map[string]*Issue{}
	}
	cp := is
	s.issues[is.ID] = &cp
}

// Issue returns an issue as it is now.
func (s *Server) Issue(id string) (Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, ok := s.issues[id]
	if !ok {
		return Issue{}, false
	}
	return *is, true
}

// Comments returns the comments on an issue, in creation order.
func (s *Server) Comments(issueID string) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.IssueID == issueID {
			out = append(out, c)
		}
	}
	return out
}

// findIssue looks an issue up by id or identifier, as Linear does, among
// those org may see. Call with s.mu held.
func (s *Server) findIssue(org, id string) *Issue {
	for _, is := range s.issues {
		if (is.ID == id || strings.EqualFold(is.Identifier, id)) && (org == "" || is.Organization == org) {
			return is
		}
	}
	return nil
}

// answerIssue answers the issue query.
func (s *Server) answerIssue(w http.ResponseWriter, rec *Request, org string, variables json.RawMessage) {
	var vars struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(variables, &vars)
	s.mu.Lock()
	is := s.findIssue(org, vars.ID)
	var data map[string]any
	if is != nil {
		nodes := []any{}
		for _, st := range is.Started {
			nodes = append(nodes, map[string]any{"id": st.ID, "position": st.Position})
		}
		var delegate any
		if is.DelegateID != "" {
			delegate = map[string]any{"id": is.DelegateID}
		}
		data = map[string]any{"issue": map[string]any{
			"id": is.ID, "identifier": is.Identifier, "delegate": delegate,
			"state": map[string]any{"id": is.StateID, "type": is.StateType},
			"team":  map[string]any{"states": map[string]any{"nodes": nodes}},
		}}
	}
	s.mu.Unlock()
	if is == nil {
		s.answerError(w, rec, invalid("Entity not found: Issue - Could not find referenced Issue."))
		return
	}
	rec.Status = http.StatusOK
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// applyIssueUpdate sets stateId and delegateId.
func (s *Server) applyIssueUpdate(org, id string, input json.RawMessage) *gqlError {
	in, gerr := decodeObject(input, "IssueUpdateInput", "stateId", "delegateId", "assigneeId", "title", "description")
	if gerr != nil {
		return gerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.findIssue(org, id)
	if is == nil {
		return invalid("Entity not found: Issue")
	}
	if v, ok, _ := str(in, "stateId"); ok {
		typ := "started"
		if t := slices.IndexFunc(s.teams[is.Team], func(st WorkflowState) bool { return st.ID == v }); t >= 0 {
			typ = s.teams[is.Team][t].Type
		} else if i := slices.IndexFunc(is.Started, func(st State) bool { return st.ID == v }); i < 0 && v != is.StateID {
			return invalid("stateId %s is not a state of the issue's team", v)
		}
		is.StateID, is.StateType = v, typ
	}
	if v, ok, _ := str(in, "delegateId"); ok {
		is.DelegateID = v
	}
	return nil
}

// applyComment records a comment, idempotent on its client-chosen id.
func (s *Server) applyComment(org string, input json.RawMessage) (map[string]any, *gqlError) {
	in, gerr := decodeObject(input, "CommentCreateInput", "id", "issueId", "body", "parentId")
	if gerr != nil {
		return nil, gerr
	}
	id, _, _ := str(in, "id")
	issueID, _, _ := str(in, "issueId")
	body, _, _ := str(in, "body")
	if id != "" && !uuidV4.MatchString(id) {
		return nil, invalid("id must be a UUID v4, got %q", id)
	}
	if strings.TrimSpace(body) == "" {
		return nil, invalid("body is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.findIssue(org, issueID)
	if is == nil {
		return nil, invalid("Entity not found: Issue")
	}
	if id == "" {
		id = newUUID()
	}
	for _, c := range s.comments {
		if c.ID == id {
			return nil, invalid("Comment with this id already exists")
		}
	}
	s.comments = append(s.comments, Comment{ID: id, IssueID: is.ID, Body: body})
	return map[string]any{opCommentCreate: map[string]any{"success": true, "comment": map[string]any{"id": id}}}, nil
}
