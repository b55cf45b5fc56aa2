package linearfake

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
)

// Operations the fake answers.
const (
	opActivityCreate = "agentActivityCreate"
	opSessionUpdate  = "agentSessionUpdate"
	opViewer         = "viewer"
	opIssue          = "issue"
	opIssueUpdate    = "issueUpdate"
	opCommentCreate  = "commentCreate"
	opAttachment     = "attachmentCreate"
	opAgentSession   = "agentSession"
	opWorkflowStates = "workflowStates"
)

// GraphQL error codes the fake answers with.
const (
	codeAuth    = "AUTHENTICATION_ERROR"
	codeInvalid = "INVALID_INPUT"
	codeParse   = "GRAPHQL_PARSE_FAILED"
)

// uuidV4 is Linear's documented id format for client-chosen ids ("The
// identifier in UUID v4 format").
var uuidV4 = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`)

type gqlRequest struct {
	Query         string          `json:"query"`
	Variables     json.RawMessage `json:"variables"`
	OperationName string          `json:"operationName"`
}

// gqlError is an error the fake answers as a GraphQL error body.
type gqlError struct {
	status  int
	code    string
	message string
}

func (e *gqlError) Error() string { return e.code + ": " + e.message }

func invalid(format string, args ...any) *gqlError {
	return &gqlError{status: http.StatusOK, code: codeInvalid, message: fmt.Sprintf(format, args...)}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec := Request{Authorization: r.Header.Get("Authorization")}
	defer func() { s.logRequest(rec) }()
	if r.Method != http.MethodPost {
		rec.Status = http.StatusMethodNotAllowed
		http.Error(w, "method not allowed", rec.Status)
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	var req gqlRequest
	if err == nil {
		err = json.Unmarshal(raw, &req)
	}
	if err != nil {
		s.answerError(w, &rec, &gqlError{http.StatusBadRequest, codeParse, "request body is not a GraphQL JSON request"})
		return
	}
	rec.Query, rec.Variables = req.Query, req.Variables
	rec.Operation = operation(req.Query)
	org, ok := s.authorized(rec.Authorization)
	if !ok {
		s.answerError(w, &rec, &gqlError{http.StatusUnauthorized, codeAuth, "Authentication required, not authenticated"})
		return
	}
	rec.Organization = org
	switch rec.Operation {
	case opViewer:
		if f := s.nextViewerFault(); f != nil {
			s.answerFault(w, &rec, f)
			return
		}
		s.answerViewer(w, &rec, org)
		return
	case opIssue:
		s.answerIssue(w, &rec, org, req.Variables)
		return
	case opAgentSession:
		s.answerAgentSession(w, &rec, org, req.Variables)
		return
	case opWorkflowStates:
		s.answerWorkflowStates(w, &rec, req.Variables)
		return
	}
	f := s.nextFault(rec.Operation)
	if f != nil && !f.AfterApply {
		s.answerFault(w, &rec, f)
		return
	}
	data, gerr := s.apply(org, rec.Operation, req.Variables)
	if f != nil {
		s.answerFault(w, &rec, f)
		return
	}
	if gerr != nil {
		s.answerError(w, &rec, gerr)
		return
	}
	rec.Status = http.StatusOK
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// operation finds the mutation a query calls.
func operation(query string) string {
	for _, op := range []string{opActivityCreate, opSessionUpdate, opIssueUpdate, opCommentCreate, opAttachment} {
		if strings.Contains(query, op+"(") || strings.Contains(query, op+" (") {
			return op
		}
	}
	if q := strings.TrimSpace(query); strings.HasPrefix(q, "query") {
		switch {
		case strings.Contains(q, "viewer"):
			return opViewer
		case strings.Contains(q, opAgentSession+"("):
			return opAgentSession
		case strings.Contains(q, opWorkflowStates+"("):
			return opWorkflowStates
		case strings.Contains(q, "issue("):
			return opIssue
		}
	}
	return ""
}

// apply does an operation's work and returns its data.
func (s *Server) apply(org, op string, variables json.RawMessage) (map[string]any, *gqlError) {
	var vars struct {
		ID    *string         `json:"id"`
		Input json.RawMessage `json:"input"`
	}
	if len(variables) > 0 && json.Unmarshal(variables, &vars) != nil {
		return nil, &gqlError{http.StatusBadRequest, codeParse, "variables are not a JSON object"}
	}
	if len(vars.Input) == 0 || string(vars.Input) == "null" {
		return nil, &gqlError{http.StatusBadRequest, codeParse, "linearfake: pass the input as the $input variable"}
	}
	switch op {
	case opCommentCreate:
		return s.applyComment(org, vars.Input)
	case opAttachment:
		return s.applyAttachment(org, vars.Input)
	case opIssueUpdate:
		if vars.ID == nil || *vars.ID == "" {
			return nil, &gqlError{http.StatusBadRequest, codeParse, `Variable "$id" of required type "String!" was not provided.`}
		}
		if err := s.applyIssueUpdate(org, *vars.ID, vars.Input); err != nil {
			return nil, err
		}
		return map[string]any{op: map[string]any{"success": true}}, nil
	case opActivityCreate:
		a, err := parseActivity(vars.Input)
		if err != nil {
			return nil, err
		}
		a, err = s.record(a)
		if err != nil {
			return nil, err
		}
		return map[string]any{op: map[string]any{"success": true, "lastSyncId": 1, "agentActivity": map[string]any{"id": a.ID}}}, nil
	case opSessionUpdate:
		if vars.ID == nil || *vars.ID == "" {
			return nil, &gqlError{http.StatusBadRequest, codeParse, `Variable "$id" of required type "String!" was not provided.`}
		}
		if err := checkSessionUpdate(vars.Input); err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.updates = append(s.updates, SessionUpdate{SessionID: *vars.ID, Input: compact(vars.Input)})
		s.mu.Unlock()
		return map[string]any{op: map[string]any{"success": true, "lastSyncId": 1}}, nil
	}
	return nil, &gqlError{http.StatusBadRequest, codeParse, "linearfake answers only agentActivityCreate, agentSessionUpdate, issueUpdate, commentCreate, attachmentCreate and the viewer, issue, agentSession and workflowStates queries"}
}

// record stores a new activity, or returns the one already stored under
// its client id (a retry) without recording anything.
func (s *Server) record(a Activity) (Activity, *gqlError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.ClientID != "" {
		if old, ok := s.byID[a.ClientID]; ok {
			if old.SessionID != a.SessionID {
				return Activity{}, invalid("id %s is already used by another agent session", a.ClientID)
			}
			return old, nil
		}
	}
	a.ID = a.ClientID
	for a.ID == "" || s.byID[a.ID].ID != "" {
		a.ID = newUUID()
	}
	s.byID[a.ID] = a
	s.activities[a.SessionID] = append(s.activities[a.SessionID], a)
	close(s.changed)
	s.changed = make(chan struct{})
	return a, nil
}

// answerViewer answers the viewer and organization query for the token's
// workspace.
func (s *Server) answerViewer(w http.ResponseWriter, rec *Request, org string) {
	s.mu.Lock()
	o, known := s.oauth.orgs[org]
	s.mu.Unlock()
	if !known {
		o = Organization{ID: "org-static", Name: "Static", URLKey: "static", AppUserID: "app-user", AppName: "brain"}
	}
	rec.Status = http.StatusOK
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{
		"viewer":       map[string]any{"id": o.AppUserID, "name": o.AppName},
		"organization": map[string]any{"id": o.ID, "name": o.Name, "urlKey": o.URLKey},
	}})
}

func (s *Server) answerFault(w http.ResponseWriter, rec *Request, f *Fault) {
	for k, vs := range f.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := f.Status
	if status == 0 {
		status = http.StatusOK
	}
	if f.Code == "" {
		rec.Status = status
		http.Error(w, f.Message, status)
		return
	}
	s.answerError(w, rec, &gqlError{status, f.Code, f.Message})
}

func (s *Server) answerError(w http.ResponseWriter, rec *Request, e *gqlError) {
	rec.Status, rec.ErrorCode = e.status, e.code
	writeJSON(w, e.status, map[string]any{
		"data": nil,
		"errors": []any{map[string]any{
			"message": e.message,
			"extensions": map[string]any{
				"code":                   e.code,
				"type":                   strings.ToLower(strings.ReplaceAll(e.code, "_", " ")),
				"userPresentableMessage": e.message,
			},
		}},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// decodeObject decodes a JSON object into its fields, refusing keys not in
// allowed (GraphQL rejects unknown input fields).
func decodeObject(raw json.RawMessage, typeName string, allowed ...string) (map[string]json.RawMessage, *gqlError) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, invalid("%s must be an object", typeName)
	}
	for k := range m {
		if !contains(allowed, k) {
			return nil, &gqlError{http.StatusBadRequest, codeParse, fmt.Sprintf("Field %q is not defined by type %q.", k, typeName)}
		}
	}
	return m, nil
}

// str decodes an optional string field: ok is false when absent or null.
func str(m map[string]json.RawMessage, key string) (v string, ok bool, err *gqlError) {
	raw, present := m[key]
	if !present || string(raw) == "null" {
		return "", false, nil
	}
	if json.Unmarshal(raw, &v) != nil {
		return "", false, invalid("%s must be a string", key)
	}
	return v, true, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var errNotBool = errors.New("not a boolean")

func boolean(raw json.RawMessage) (bool, error) {
	switch string(raw) {
	case "true":
		return true, nil
	case "false", "null":
		return false, nil
	}
	return false, errNotBool
}
