package web

import (
	"context"
	"net/http"

	"brain/engine"
	"brain/store"
)

// The "Needs you" inbox: the pending approvals the visitor may decide and
// the open questions they may answer, across sessions. Deciding and
// answering go through the same handlers (and so the same engine rules)
// as on an approval's or a session's page.

// inboxLimit bounds each list of the inbox (and so the count in the
// navigation).
const inboxLimit = 100

type inboxView struct {
	Approvals []engine.Approval
	Questions []questionRow
	Notice    string
}

// questionRow is a session waiting for an answer. Here says the console
// may answer it (API and console sessions); others are answered on their
// platform, where Link opens the thread.
type questionRow struct {
	Session  engine.Session
	Question *engine.Question
	Title    string
	Here     bool
	Link     string
}

func (s *Server) inboxPage(w http.ResponseWriter, r *http.Request, v visitor) {
	vw := inboxView{Notice: r.URL.Query().Get("notice")}
	var err error
	if vw.Approvals, vw.Questions, err = s.needsYou(r.Context(), r, v); err != nil {
		s.internal(w, r, v, err)
		return
	}
	for i, q := range vw.Questions {
		evs, err := s.cfg.Engine.Events(r.Context(), q.Session.ID, 0, titleEvents)
		if err != nil {
			s.internal(w, r, v, err)
			return
		}
		var sum summary
		summarize(evs, &sum)
		vw.Questions[i].Title = sum.Title
	}
	s.render(w, r, http.StatusOK, "inbox", v, vw)
}

// needsYou finds what waits for v: the pending approvals v may decide (as
// a decision by v would be allowed) and the open questions of the
// sessions that talk to v (an admin: every open question).
func (s *Server) needsYou(ctx context.Context, r *http.Request, v visitor) ([]engine.Approval, []questionRow, error) {
	by, viaKey := v.identity()
	// As the decide handler will decide: from the same surface, so the
	// approvals of the visitor's other identities (their person's) show.
	approvals, err := s.cfg.Engine.DecidableApprovals(ctx, engine.Decision{By: by, ViaAPI: viaKey, Surface: signInSurface(viaKey)}, inboxLimit)
	if err != nil {
		return nil, nil, err
	}
	q := store.SessionQuery{Status: engine.StatusAwaitingInput, Limit: inboxLimit}
	if !s.admin(r, v) {
		if v.by == "" {
			return approvals, nil, nil
		}
		q.Person = v.by
	}
	waiting, _, err := s.cfg.Search.ListSessions(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	var questions []questionRow
	for _, ss := range waiting {
		qu := ss.OpenQuestion()
		// A person answers the questions of the sessions that talk to
		// them, as on every platform.
		if qu == nil || (!s.admin(r, v) && ss.StartedBy != v.by) {
			continue
		}
		questions = append(questions, questionRow{Session: ss, Question: qu,
			Here: ss.Origin == engine.OriginAPI || ss.Origin == engine.OriginConsole, Link: s.originLink(ss)})
	}
	return approvals, questions, nil
}

// inboxCount is the count shown in the navigation; a failure shows none
// (the page itself reports it).
func (s *Server) inboxCount(r *http.Request, v visitor) int {
	if !v.signedIn && !s.open(r) {
		return 0
	}
	a, q, err := s.needsYou(r.Context(), r, v)
	if err != nil {
		return 0
	}
	return len(a) + len(q)
}
