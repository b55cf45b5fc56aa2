package web

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"brain/engine"
	"brain/tools"
)

// Sessions list limits.
const (
	pageSize = 25
	// timelineWindow is how many of a session's newest events its page
	// shows; earlier ones are a link away.
	timelineWindow = 2000
	// maxMessage caps a message typed in the console.
	maxMessage = 16 << 10
)

var sessionStatuses = []engine.Status{engine.StatusIdle, engine.StatusRunning, engine.StatusAwaitingInput, engine.StatusInterrupted, engine.StatusFailed}

// ownOrigins are the origins of sessions started without a platform.
var ownOrigins = []engine.Origin{engine.OriginAPI, engine.OriginConsole, engine.OriginSchedule}

// origins are the origins the sessions list filters by: the platforms',
// then brain's own.
func (s *Server) origins() []engine.Origin {
	var out []engine.Origin
	for _, o := range s.cfg.Origins {
		out = append(out, engine.Origin(o.Name))
	}
	return append(out, ownOrigins...)
}

// title is a session's title: its first message, from the first few
// events (never the whole log: a session may hold 100,000).
func (s *Server) title(r *http.Request, ss engine.Session) (string, error) {
	if ss.LastSeq == 0 {
		return "", nil
	}
	evs, err := s.cfg.Engine.Events(r.Context(), ss.ID, 0, titleEvents)
	if err != nil {
		return "", err
	}
	var sum summary
	summarize(evs, &sum)
	return sum.Title, nil
}

// originLink is where a session's conversation lives: its thread on its
// platform, or the schedules page; "" when there is no page to open.
func (s *Server) originLink(ss engine.Session) string {
	if ss.Origin == engine.OriginSchedule {
		return "/schedules"
	}
	for _, o := range s.cfg.Origins {
		if o.Name == string(ss.Origin) && o.Link != nil {
			return o.Link(ss)
		}
	}
	return ""
}

type sessionView struct {
	Session engine.Session
	Title   string
	Header  headerView
	Items   []template.HTML
	// Raw shows the event log instead of the trace.
	Raw bool
	// After is the seq the live stream continues from; TurnFrom the seq
	// the trace's last turn starts at (the live trace rebuilds it);
	// Earlier links the events before the window.
	After     int64
	TurnFrom  int64
	Earlier   string
	Question  *engine.Question
	Approvals []engine.Approval
	CanSend   bool
	Notice    string
	// Connected is shown when the person came back from connecting an
	// account a call needed.
	Connected *connectedView
}

// headerView is the session's header: its facts, usage and actions. The
// live stream sends it again when the status or the usage changes.
type headerView struct {
	Session    engine.Session
	OriginLink string
	Usage      engine.Usage
	Cost       float64
	Priced     bool
	CanCancel  bool
	CanResume  bool
	CSRF       string
}

// header makes ss's header for v, with its usage so far (the running
// total the store keeps on the session, so no page reads the whole log).
func (s *Server) header(r *http.Request, v visitor, ss engine.Session) headerView {
	// Offered as the actions would allow (cancel: an approver may too,
	// and is told so by the engine if not). Cancel only while a turn
	// runs or a question waits.
	starter := s.admin(r, v) || (v.by != "" && ss.StartedBy == v.by)
	h := headerView{Session: ss, OriginLink: s.originLink(ss), Usage: ss.UsageTotal, CSRF: v.csrf,
		CanCancel: starter && (ss.Status == engine.StatusRunning || ss.Status == engine.StatusAwaitingInput),
		CanResume: starter && (ss.Status == engine.StatusInterrupted || ss.Status == engine.StatusFailed)}
	h.Cost, h.Priced = s.cost(ss.Agent, ss.UsageTotal)
	return h
}

// pricer is the agent's price as the tracer asks for it.
func (s *Server) pricer(agent string) func(engine.Usage) (float64, bool) {
	return func(u engine.Usage) (float64, bool) { return s.cost(agent, u) }
}

func (s *Server) sessionPage(w http.ResponseWriter, r *http.Request, v visitor) {
	ss, ok := s.session(w, r, v)
	if !ok {
		return
	}
	var err error
	q := r.URL.Query()
	vw := sessionView{Session: ss, Question: ss.OpenQuestion(), Notice: q.Get("notice"), Raw: q.Get("view") == "raw",
		Connected: connectedOf(q, ss)}
	from := max(0, ss.LastSeq-timelineWindow)
	if a, err := strconv.ParseInt(q.Get("from"), 10, 64); err == nil && a >= 0 {
		from = a
	}
	if from > 0 {
		vw.Earlier = "/sessions/" + url.PathEscape(ss.ID) + "?from=" + strconv.FormatInt(max(0, from-timelineWindow), 10)
		if vw.Raw {
			vw.Earlier += "&view=raw"
		}
	}
	tr := newTracer(s.pricer(ss.Agent))
	after := from
	for {
		evs, err := s.cfg.Engine.Events(r.Context(), ss.ID, after, summaryPage)
		if err != nil {
			s.internal(w, r, v, err)
			return
		}
		for _, ev := range evs {
			if vw.Raw {
				h, ok, err := s.pages.renderItem(ev)
				if err != nil {
					s.internal(w, r, v, err)
					return
				}
				if ok {
					vw.Items = append(vw.Items, h)
				}
			} else {
				tr.add(ev)
			}
			after = ev.Seq
		}
		if len(evs) < summaryPage || len(vw.Items) >= 4*timelineWindow {
			break
		}
	}
	vw.After, vw.TurnFrom = after, after
	for i := range tr.entries {
		e := &tr.entries[i]
		if e.Turn != nil {
			vw.TurnFrom = e.Turn.Seq - 1
		}
		h, err := s.pages.renderEntry(e)
		if err != nil {
			s.internal(w, r, v, err)
			return
		}
		vw.Items = append(vw.Items, h)
	}
	if vw.Title, err = s.title(r, ss); err != nil {
		s.internal(w, r, v, err)
		return
	}
	vw.Header = s.header(r, v, ss)
	vw.Approvals, err = s.cfg.Engine.Approvals(r.Context(), engine.ApprovalFilter{SessionID: ss.ID,
		Statuses: []engine.ApprovalStatus{engine.ApprovalPending, engine.ApprovalUnconfirmed, engine.ApprovalFailed}, Limit: 50})
	if err != nil {
		s.internal(w, r, v, err)
		return
	}
	vw.CanSend = (ss.Origin == engine.OriginAPI || ss.Origin == engine.OriginConsole) &&
		ss.Status != engine.StatusInterrupted && ss.Status != engine.StatusFailed
	s.render(w, r, http.StatusOK, "session", v, vw)
}

// startSession starts a console session with its first message.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, v visitor) {
	text := strings.TrimSpace(r.PostForm.Get("text"))
	agent := orDefault(r.PostForm.Get("agent"), s.cfg.DefaultAgent)
	if text == "" || len(text) > maxMessage {
		s.fail(w, r, v, http.StatusBadRequest, "Write a message of 1 to 16384 bytes.")
		return
	}
	by, _ := v.identity()
	n := engine.NewSession{Agent: agent, Origin: engine.OriginConsole, Interactive: true, StartedBy: by}
	in := engine.Input{Text: text, Author: by}
	if idem := r.PostForm.Get("idem"); idem != "" {
		// The form's key: a double submit starts one session.
		n.IdempotencyKey, in.IdempotencyKey = "console:"+idem, "console:"+idem
	}
	ss, _, _, err := s.cfg.Engine.CreateSessionWithInput(r.Context(), n, in)
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	http.Redirect(w, r, "/sessions/"+url.PathEscape(ss.ID), http.StatusSeeOther)
}

// sendMessage sends a message, or an answer to the open question, to an
// API or console session.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request, v visitor) {
	ss, ok := s.session(w, r, v)
	if !ok {
		return
	}
	id := ss.ID
	if ss.Origin != engine.OriginAPI && ss.Origin != engine.OriginConsole {
		s.fail(w, r, v, http.StatusConflict, "This session lives in "+string(ss.Origin)+": answer it there.")
		return
	}
	by, _ := v.identity()
	in := engine.Input{Text: strings.TrimSpace(r.PostForm.Get("text")), Author: by, IdempotencyKey: r.PostForm.Get("idem")}
	if qid := r.PostForm.Get("question_id"); qid != "" && r.PostForm.Get("form") != "" {
		// The form of a tool's request for input: checked field by field.
		text, err := formAnswer(ss, qid, r.PostForm)
		if err != nil {
			s.fail(w, r, v, http.StatusBadRequest, "Not sent: "+err.Error()+".")
			return
		}
		in.Answer, in.Text = &engine.Answer{QuestionID: qid, Text: text}, ""
	} else if qid != "" {
		// A button's value, or a typed answer (the inbox's form).
		in.Answer = &engine.Answer{QuestionID: qid, Value: r.PostForm.Get("value")}
		if in.Answer.Value == "" && len(in.Text) <= maxMessage {
			in.Answer.Text = in.Text
		}
		in.Text = ""
	} else if in.Text == "" || len(in.Text) > maxMessage {
		s.fail(w, r, v, http.StatusBadRequest, "Write a message of 1 to 16384 bytes.")
		return
	}
	if _, _, err := s.cfg.Engine.Send(r.Context(), id, in); err != nil {
		s.engineError(w, r, v, err)
		return
	}
	if r.PostForm.Get("back") != "" {
		s.backTo(w, r, "/sessions/"+url.PathEscape(id), "answered")
		return
	}
	http.Redirect(w, r, "/sessions/"+url.PathEscape(id), http.StatusSeeOther)
}

// cancel stops a session's turn: an admin any session's, others as a
// Stop click in Slack would (the person who started it, or an approver).
func (s *Server) cancel(w http.ResponseWriter, r *http.Request, v visitor) {
	ss, ok := s.session(w, r, v)
	if !ok {
		return
	}
	id := ss.ID
	var err error
	if s.admin(r, v) {
		_, err = s.cfg.Engine.Cancel(r.Context(), id)
	} else {
		_, _, err = s.cfg.Engine.StopFor(r.Context(), id, v.by)
	}
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	s.log.Info("console cancelled a session", tools.LogSession, id, tools.LogWho, v.name)
	http.Redirect(w, r, "/sessions/"+url.PathEscape(id)+"?notice=cancelled", http.StatusSeeOther)
}

// resume resumes a stopped session: an admin any, others only one they
// started, as the Resume button in Slack.
func (s *Server) resume(w http.ResponseWriter, r *http.Request, v visitor) {
	ss, ok := s.session(w, r, v)
	if !ok {
		return
	}
	id := ss.ID
	if !s.admin(r, v) && ss.StartedBy != v.by {
		s.fail(w, r, v, http.StatusForbidden, "Only "+orDefault(ss.StartedBy, "an admin")+", who started this session, may resume it.")
		return
	}
	res, err := s.cfg.Engine.ResumeWith(r.Context(), id, engine.ResumeOptions{Retry: r.PostForm.Get("retry") != ""})
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	notice := "resumed"
	if n := len(res.Retried); n > 0 {
		notice = "resumed; " + strconv.Itoa(n) + " input(s) queued again"
	}
	http.Redirect(w, r, "/sessions/"+url.PathEscape(id)+"?notice="+url.QueryEscape(notice), http.StatusSeeOther)
}

// engineError answers an engine failure with its code's status and its
// message, fit for people; anything else is an internal error.
func (s *Server) engineError(w http.ResponseWriter, r *http.Request, v visitor, err error) {
	var ee *engine.Error
	if !errors.As(err, &ee) {
		s.internal(w, r, v, err)
		return
	}
	status := map[string]int{
		engine.CodeInvalid: http.StatusBadRequest, engine.CodeUnauthorized: http.StatusUnauthorized,
		engine.CodeForbidden: http.StatusForbidden, engine.CodeNotFound: http.StatusNotFound,
		engine.CodeConflict: http.StatusConflict, engine.CodeOverloaded: http.StatusTooManyRequests,
	}[ee.Code]
	if status == 0 {
		s.internal(w, r, v, err)
		return
	}
	s.fail(w, r, v, status, ee.Message)
}

func (s *Server) internal(w http.ResponseWriter, r *http.Request, v visitor, err error) {
	s.log.Error("console request failed", tools.LogPath, r.URL.Path, tools.LogErr, err)
	s.fail(w, r, v, http.StatusInternalServerError, "Internal error; the log has the details.")
}

// formAnswer reads the console's form of the open question (field_<name>
// inputs) into the answer's text.
func formAnswer(ss engine.Session, qid string, form url.Values) (string, error) {
	q := ss.OpenQuestion()
	if q == nil || q.ID != qid || q.Call == nil {
		return "", errors.New("the question is already closed")
	}
	values := map[string]string{}
	for _, f := range q.Call.Elicitation.Fields {
		values[f.Name] = form.Get("field_" + f.Name)
	}
	return q.FormAnswer(values)
}
