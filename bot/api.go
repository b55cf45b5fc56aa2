package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"brain/engine"
)

// api serves the sessions REST API under /v1, /healthz and /metrics.
type api struct {
	engine       *engine.Engine
	schedules    *Scheduler
	log          *slog.Logger
	keys         keyring
	maxBody      int64
	defaultAgent string
	// done ends long-lived responses (SSE) when the server shuts down.
	done <-chan struct{}

	mu       sync.Mutex
	statuses map[int]int64
}

func (a *api) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.HandleFunc("GET /metrics", a.auth(a.metrics))
	mux.HandleFunc("POST /v1/sessions", a.auth(a.createSession))
	mux.HandleFunc("GET /v1/sessions", a.auth(a.listSessions))
	mux.HandleFunc("GET /v1/sessions/{id}", a.auth(a.getSession))
	mux.HandleFunc("GET /v1/sessions/{id}/events", a.auth(a.listEvents))
	mux.HandleFunc("POST /v1/sessions/{id}/events", a.auth(a.postEvent))
	mux.HandleFunc("POST /v1/sessions/{id}/resume", a.auth(a.resume))
	mux.HandleFunc("POST /v1/sessions/{id}/cancel", a.auth(a.cancel))
	mux.HandleFunc("GET /v1/sessions/{id}/results", a.auth(a.results))
	mux.HandleFunc("GET /v1/approvals", a.auth(a.listApprovals))
	mux.HandleFunc("GET /v1/approvals/{id}", a.auth(a.getApproval))
	mux.HandleFunc("POST /v1/approvals/{id}/decision", a.auth(a.decide))
	mux.HandleFunc("POST /v1/approvals/{id}/retry", a.auth(a.retry))
	mux.HandleFunc("GET /v1/schedules", a.auth(a.listSchedules))
	mux.HandleFunc("POST /v1/schedules/{name}/run", a.auth(a.runSchedule))
	return a.middleware(mux)
}

// middleware gives every response a request id, answers unrouted requests
// and panics with the error envelope, and counts statuses.
func (a *api) middleware(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := newRequestID()
		w.Header().Set("X-Request-ID", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				writeError(rec, r, a.log, fmt.Errorf("panic: %v", p))
			}
			a.countStatus(rec.status)
		}()
		h, pattern := mux.Handler(r)
		if pattern == "" {
			probe := &discardWriter{header: http.Header{}}
			h.ServeHTTP(probe, r)
			writeError(rec, r, a.log, routeError(probe.status, r.Method, r.URL.Path))
			return
		}
		mux.ServeHTTP(rec, r)
	})
}

func (a *api) countStatus(status int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.statuses == nil {
		a.statuses = map[int]int64{}
	}
	a.statuses[status]++
}

// auth requires a bearer key when keys are configured. With none, the
// server only listens on loopback (config validation enforces it).
func (a *api) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !a.keys.empty() && !a.keys.allows(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="brain"`)
			writeError(w, r, a.log, engine.Errorf("unauthorized", "a valid bearer API key is required (Authorization: Bearer KEY)"))
			return
		}
		next(w, r)
	}
}

func (a *api) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (a *api) metrics(w http.ResponseWriter, r *http.Request) {
	st := a.engine.Stats()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, "# TYPE brain_turns_running gauge\nbrain_turns_running %d\n", st.RunningTurns)
	fmt.Fprintf(w, "# TYPE brain_turns_queued gauge\nbrain_turns_queued %d\n", st.QueuedTurns)
	names := make([]string, 0, len(st.Counters))
	for name := range st.Counters {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "# TYPE brain_%s_total counter\nbrain_%s_total %d\n", name, name, st.Counters[name])
	}
	a.mu.Lock()
	codes := make([]int, 0, len(a.statuses))
	for c := range a.statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	fmt.Fprintf(w, "# TYPE brain_http_responses_total counter\n")
	for _, c := range codes {
		fmt.Fprintf(w, "brain_http_responses_total{code=\"%d\"} %d\n", c, a.statuses[c])
	}
	a.mu.Unlock()
}

// createSessionRequest is the body of POST /v1/sessions.
type createSessionRequest struct {
	Agent string `json:"agent"`
	// Interactive defaults to true: a person answers through the API.
	Interactive *bool  `json:"interactive"`
	StartedBy   string `json:"started_by"`
	// Message, when set, is sent as the first user.message.
	Message string `json:"message"`
}

// sessionResponse is a session, plus the first message when one was sent.
type sessionResponse struct {
	engine.Session
	Event *engine.Event `json:"event,omitempty"`
}

func (a *api) createSession(w http.ResponseWriter, r *http.Request) {
	var req createSessionRequest
	if err := decodeBody(w, r, a.maxBody, &req); err != nil {
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
	n := engine.NewSession{
		Agent:          req.Agent,
		Origin:         engine.OriginAPI,
		Interactive:    req.Interactive == nil || *req.Interactive,
		StartedBy:      req.StartedBy,
		IdempotencyKey: key,
	}
	s, created, err := a.engine.CreateSession(r.Context(), n)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	resp := sessionResponse{Session: s}
	if req.Message != "" {
		// The same key makes the first message idempotent with the session.
		inputKey := ""
		if key != "" {
			inputKey = "create:" + key
		}
		ev, _, err := a.engine.Send(r.Context(), s.ID, engine.Input{Text: req.Message, Author: req.StartedBy, IdempotencyKey: inputKey})
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		resp.Event = &ev
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	writeJSON(w, status, resp)
}

func (a *api) listSessions(w http.ResponseWriter, r *http.Request) {
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
			f.Statuses = append(f.Statuses, engine.Status(s))
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

func (a *api) getSession(w http.ResponseWriter, r *http.Request) {
	s, err := a.engine.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
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

func (a *api) postEvent(w http.ResponseWriter, r *http.Request) {
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
	ev, dup, err := a.engine.Send(r.Context(), r.PathValue("id"), in)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	status := http.StatusAccepted
	if dup {
		status = http.StatusOK
	}
	writeJSON(w, status, ev)
}

func (a *api) resume(w http.ResponseWriter, r *http.Request) {
	s, err := a.engine.Resume(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

func (a *api) cancel(w http.ResponseWriter, r *http.Request) {
	ctx, stop := context.WithTimeout(r.Context(), 30*time.Second)
	defer stop()
	s, err := a.engine.Cancel(ctx, r.PathValue("id"))
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

func (a *api) results(w http.ResponseWriter, r *http.Request) {
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
