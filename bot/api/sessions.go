package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"brain/engine"
)

// createSessionRequest is the body of POST /v1/sessions.
type createSessionRequest struct {
	Agent string `json:"agent"`
	// Interactive defaults to true: a person answers through the API.
	Interactive *bool  `json:"interactive"`
	StartedBy   string `json:"started_by"`
	// Message, when set, is sent as the first user.message.
	Message string `json:"message"`
}

// SessionResponse is the body of POST /v1/sessions: the session, plus the
// first message when one was sent.
type SessionResponse struct {
	engine.Session
	Event *engine.Event `json:"event,omitempty"`
}

func (a *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req createSessionRequest
	var err error
	if err = decodeBody(w, r, a.maxBody, &req); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if len(key) > 255 {
		writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "Idempotency-Key is over 255 characters"))
		return
	}
	if req.Agent == "" {
		req.Agent = a.defaultAgent
	}
	// The requester of the session's approvals is who authenticated:
	// forbid_self compares deciders with it.
	// The key is recorded too: a key with act_for that started a session
	// for someone may not approve its requests for someone else.
	var startedKey string
	if req.StartedBy, startedKey, err = a.decider(r, req.StartedBy, "starts sessions"); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	n := engine.NewSession{
		Agent:          req.Agent,
		Origin:         engine.OriginAPI,
		Interactive:    req.Interactive == nil || *req.Interactive,
		StartedBy:      req.StartedBy,
		StartedKey:     startedKey,
		IdempotencyKey: key,
	}
	var resp SessionResponse
	var created bool
	var in engine.Input // the first message, if any
	if req.Message == "" {
		resp.Session, created, err = a.engine.CreateSession(r.Context(), n)
	} else {
		// The same key makes the first message idempotent with the session;
		// a session whose message cannot be queued is not created.
		in = engine.Input{Text: req.Message, Author: req.StartedBy, RequestID: requestID(r.Context())}
		if key != "" {
			in.IdempotencyKey = "create:" + key
		}
		var ev engine.Event
		resp.Session, ev, created, err = a.engine.CreateSessionWithInput(r.Context(), n, in)
		resp.Event = &ev
	}
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if !created {
		// A replay under the key: the same body, or a 422.
		err := checkSessionReplay(resp.Session, n)
		if err == nil && resp.Event != nil {
			err = checkReplay(*resp.Event, in)
		}
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	writeJSON(w, status, resp)
}

// sessionStatuses are the statuses ?status= may name on GET /v1/sessions.
var sessionStatuses = map[engine.Status]bool{
	engine.StatusIdle: true, engine.StatusRunning: true, engine.StatusAwaitingInput: true,
	engine.StatusInterrupted: true, engine.StatusFailed: true,
}

func (a *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	f := engine.SessionFilter{Limit: 100}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "limit must be 1..1000"))
			return
		}
		f.Limit = n
	}
	if v := r.URL.Query().Get("status"); v != "" {
		for _, s := range strings.Split(v, ",") {
			st := engine.Status(strings.TrimSpace(s))
			if !sessionStatuses[st] {
				writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid,
					"status %q is not a session status (idle, running, awaiting_input, interrupted, failed)", s))
				return
			}
			f.Statuses = append(f.Statuses, st)
		}
	}
	list, err := a.engine.Sessions(r.Context(), f)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if list == nil {
		list = []engine.Session{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": list})
}

// eventRequest is the body of POST /v1/sessions/{id}/events.
type eventRequest struct {
	Type           string         `json:"type"`
	Text           string         `json:"text"`
	Author         string         `json:"author"`
	Mode           string         `json:"mode"`
	IdempotencyKey string         `json:"idempotency_key"`
	Answer         *engine.Answer `json:"answer"`
}

// parseEventRequest decodes and checks a user.message body.
func parseEventRequest(body []byte) (engine.Input, error) {
	var req eventRequest
	if err := decodeJSON(body, &req); err != nil {
		return engine.Input{}, err
	}
	if req.Type != engine.EventUserMessage {
		return engine.Input{}, engine.Errorf(engine.CodeInvalid, "type must be %q", engine.EventUserMessage)
	}
	if a := req.Answer; a != nil {
		if a.QuestionID == "" {
			return engine.Input{}, engine.Errorf(engine.CodeInvalid, "answer.question_id is required")
		}
		if a.Value == "" && strings.TrimSpace(a.Text) == "" {
			return engine.Input{}, engine.Errorf(engine.CodeInvalid, "answer needs a value or text")
		}
		if strings.TrimSpace(req.Text) == "" {
			// The answer is the message.
			req.Text = a.Text
			if req.Text == "" {
				req.Text = a.Value
			}
		}
	}
	if strings.TrimSpace(req.Text) == "" {
		return engine.Input{}, engine.Errorf(engine.CodeInvalid, "text is required")
	}
	if len(req.IdempotencyKey) > 255 {
		return engine.Input{}, engine.Errorf(engine.CodeInvalid, "idempotency_key is over 255 characters")
	}
	return engine.Input{Text: req.Text, Author: req.Author, Mode: req.Mode, IdempotencyKey: req.IdempotencyKey, Answer: req.Answer}, nil
}

func (a *Server) postEvent(w http.ResponseWriter, r *http.Request) {
	var raw json.RawMessage
	if err := decodeBody(w, r, a.maxBody, &raw); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	in, err := parseEventRequest(raw)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	in.RequestID = requestID(r.Context())
	ev, dup, err := a.engine.Send(r.Context(), r.PathValue("id"), in)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	status := http.StatusAccepted
	if dup {
		if err := checkReplay(ev, in); err != nil {
			writeError(w, r, a.log, err)
			return
		}
		status = http.StatusOK
	}
	writeJSON(w, status, ev)
}

// resumeRequest is the optional body of POST /v1/sessions/{id}/resume.
type resumeRequest struct {
	// Retry queues the input the session's stop left unanswered again.
	Retry bool `json:"retry"`
}

// ResumeResponse is the body of POST /v1/sessions/{id}/resume: the session,
// plus the user.message events a retry queued.
type ResumeResponse struct {
	engine.Session
	Retried []engine.Event `json:"retried,omitempty"`
}

func (a *Server) resume(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r, a.maxBody)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	var req resumeRequest
	if len(bytes.TrimSpace(body)) > 0 { // no body is a plain resume
		if err := decodeJSON(body, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
	}
	res, err := a.engine.ResumeWith(r.Context(), r.PathValue("id"), engine.ResumeOptions{Retry: req.Retry, RequestID: requestID(r.Context())})
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, ResumeResponse{Session: res.Session, Retried: res.Retried})
}

func (a *Server) cancel(w http.ResponseWriter, r *http.Request) {
	ctx, stop := context.WithTimeout(r.Context(), 30*time.Second)
	defer stop()
	s, err := a.engine.Cancel(ctx, r.PathValue("id"))
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

func (a *Server) results(w http.ResponseWriter, r *http.Request) {
	list, err := a.engine.Results(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	out := make([]map[string]any, 0, len(list))
	for _, res := range list {
		out = append(out, map[string]any{
			"turn_id": res.TurnID, "call_id": res.CallID, "reported_at": res.ReportedAt,
			"data": json.RawMessage(res.Data),
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": out})
}
