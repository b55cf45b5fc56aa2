package linearfake

import (
	"encoding/json"
	"net/http"
	"slices"
)

// WorkflowState is a state of a team's workflow, as the workflowStates
// query answers it.
type WorkflowState struct {
	ID, Name, Type string // Type: triage, backlog, unstarted, started, completed, canceled
	Position       float64
}

// Attachment is an issue's link to an outside resource (a pull request),
// one per URL: Linear documents the url as the attachment's unique
// identifier ("If another attachment is created with the same url value,
// existing record is updated instead").
type Attachment struct {
	ID, IssueID, URL, Title, Subtitle string
	// Writes counts the attachmentCreate calls that made or updated it.
	Writes int
}

// AddTeam sets a team's workflow states.
func (s *Server) AddTeam(id string, states ...WorkflowState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.teams == nil {
		s.teams = map[string][]WorkflowState{}
	}
	s.teams[id] = slices.Clone(states)
}

// Attachments returns an issue's attachments in creation order.
func (s *Server) Attachments(issueID string) []Attachment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Attachment
	for _, a := range s.attachments {
		if a.IssueID == issueID {
			out = append(out, a)
		}
	}
	return out
}

// answerAgentSession answers agentSession(id) with its issue and the
// issue's team; an agent session on no issue has issue null.
func (s *Server) answerAgentSession(w http.ResponseWriter, rec *Request, org string, variables json.RawMessage) {
	var vars struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(variables, &vars)
	if vars.ID == "" {
		s.answerError(w, rec, &gqlError{http.StatusBadRequest, codeParse, `Variable "$id" of required type "String!" was not provided.`})
		return
	}
	s.mu.Lock()
	var issue any
	for _, is := range s.issues {
		if slices.Contains(is.Sessions, vars.ID) && (org == "" || is.Organization == org) {
			issue = map[string]any{"id": is.ID, "identifier": is.Identifier, "team": map[string]any{"id": is.Team}}
		}
	}
	s.mu.Unlock()
	rec.Status = http.StatusOK
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{opAgentSession: map[string]any{"id": vars.ID, "issue": issue}}})
}

// answerWorkflowStates answers workflowStates(filter: {team: {id: {eq:
// $team}}}) with that team's states (the only filter brain sends).
func (s *Server) answerWorkflowStates(w http.ResponseWriter, rec *Request, variables json.RawMessage) {
	var vars struct {
		Team string `json:"team"`
	}
	_ = json.Unmarshal(variables, &vars)
	if vars.Team == "" {
		s.answerError(w, rec, &gqlError{http.StatusBadRequest, codeParse, `Variable "$team" of required type "ID!" was not provided.`})
		return
	}
	s.mu.Lock()
	nodes := []any{}
	for _, st := range s.teams[vars.Team] {
		nodes = append(nodes, map[string]any{"id": st.ID, "name": st.Name, "type": st.Type, "position": st.Position})
	}
	s.mu.Unlock()
	rec.Status = http.StatusOK
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{opWorkflowStates: map[string]any{"nodes": nodes}}})
}

// applyAttachment creates an attachment, or updates the issue's one with
// the same URL.
func (s *Server) applyAttachment(org string, input json.RawMessage) (map[string]any, *gqlError) {
	in, gerr := decodeObject(input, "AttachmentCreateInput", "id", "issueId", "url", "title", "subtitle", "iconUrl", "metadata", "groupBySource", "commentBody")
	if gerr != nil {
		return nil, gerr
	}
	issueID, _, _ := str(in, "issueId")
	url, _, _ := str(in, "url")
	title, _, _ := str(in, "title")
	subtitle, _, _ := str(in, "subtitle")
	id, _, _ := str(in, "id")
	switch {
	case url == "":
		return nil, invalid("url is required")
	case title == "":
		return nil, invalid("title is required")
	case id != "" && !uuidV4.MatchString(id):
		return nil, invalid("id must be a UUID v4, got %q", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.findIssue(org, issueID)
	if is == nil {
		return nil, invalid("Entity not found: Issue")
	}
	i := slices.IndexFunc(s.attachments, func(a Attachment) bool { return a.IssueID == is.ID && a.URL == url })
	if i < 0 {
		if id == "" {
			id = newUUID()
		}
		s.attachments = append(s.attachments, Attachment{ID: id, IssueID: is.ID, URL: url})
		i = len(s.attachments) - 1
	}
	a := &s.attachments[i]
	a.Title, a.Subtitle = title, subtitle
	a.Writes++
	return map[string]any{opAttachment: map[string]any{"success": true, "lastSyncId": 1, "attachment": map[string]any{"id": a.ID}}}, nil
}
