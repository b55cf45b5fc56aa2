package web

import (
	"context"
	"net/http"

	"brain/engine"
	"brain/store"
)

// Who sees and does what in the console (docs/security-console.md):
//
//   - an admin (signed in with an API key, a person listed in
//     console.admins, or anyone on an open console: this host, no
//     api_keys) sees and acts on everything;
//   - a person signed in with Slack sees the sessions they started or
//     wrote in (their DMs with the bot included) and the approvals of
//     those sessions, plus the approvals they may decide; they act on
//     those sessions under the platforms' rules: cancel as Stop in Slack
//     (the person the session talks to, or an approver), resume only the
//     person who started it, post where they may read;
//   - schedules and the status page are for admins: nothing there is a
//     person's own, and "run now" is an API key's action elsewhere too.
//
// A session or approval a person may not see answers 404, as a missing
// one does, so its id tells nothing.

// admin reports whether v sees and acts on everything.
func (s *Server) admin(r *http.Request, v visitor) bool {
	if v.signedIn {
		return v.admin
	}
	return s.open(r)
}

// notFound is the answer for what v may not see, worded as for a missing
// session or approval.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request, v visitor, what string) {
	s.fail(w, r, v, http.StatusNotFound, what+" not found.")
}

// maySee reports whether v may see session ss: an admin, the person who
// started it, or a person who wrote in it.
func (s *Server) maySee(ctx context.Context, r *http.Request, v visitor, ss engine.Session) (bool, error) {
	if s.admin(r, v) {
		return true, nil
	}
	if !v.signedIn || v.by == "" {
		return false, nil
	}
	if ss.StartedBy == v.by {
		return true, nil
	}
	// Who wrote in a session is the search index's to answer (its people
	// table, by primary key), never the log's: a session may hold 100,000
	// events.
	list, _, err := s.cfg.Search.ListSessions(ctx, store.SessionQuery{ID: ss.ID, Person: v.by, Limit: 1})
	return len(list) == 1, err
}

// session reads the session named by the path's {id}, answering 404 (and
// false) when it is missing or v may not see it.
func (s *Server) session(w http.ResponseWriter, r *http.Request, v visitor) (engine.Session, bool) {
	ss, err := s.cfg.Engine.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		s.engineError(w, r, v, err)
		return engine.Session{}, false
	}
	ok, err := s.maySee(r.Context(), r, v, ss)
	if err != nil {
		s.internal(w, r, v, err)
		return engine.Session{}, false
	}
	if !ok {
		s.notFound(w, r, v, "Session "+ss.ID)
		return engine.Session{}, false
	}
	return ss, true
}

// maySeeApproval reports whether v may see approval a (its arguments
// included): an admin, someone who may decide it, or someone who may see
// its session.
func (s *Server) maySeeApproval(ctx context.Context, r *http.Request, v visitor, a engine.Approval) (bool, error) {
	if s.admin(r, v) {
		return true, nil
	}
	if !v.signedIn || v.by == "" {
		return false, nil
	}
	if s.cfg.Engine.MayDecideApproval(ctx, a, v.by) == nil {
		return true, nil
	}
	ss, err := s.cfg.Engine.Session(ctx, a.SessionID)
	if err != nil {
		return false, err
	}
	return s.maySee(ctx, r, v, ss)
}

// approval reads the approval named by the path's {id}, answering 404
// (and false) when it is missing or v may not see it.
func (s *Server) approval(w http.ResponseWriter, r *http.Request, v visitor) (engine.Approval, bool) {
	a, err := s.cfg.Engine.Approval(r.Context(), r.PathValue("id"))
	if err != nil {
		s.engineError(w, r, v, err)
		return engine.Approval{}, false
	}
	ok, err := s.maySeeApproval(r.Context(), r, v, a)
	if err != nil {
		s.internal(w, r, v, err)
		return engine.Approval{}, false
	}
	if !ok {
		s.notFound(w, r, v, "Approval "+a.ID)
		return engine.Approval{}, false
	}
	return a, true
}

// visibleApprovals keeps those of list v may see.
func (s *Server) visibleApprovals(r *http.Request, v visitor, list []engine.Approval) ([]engine.Approval, error) {
	if s.admin(r, v) {
		return list, nil
	}
	out := list[:0:0]
	for _, a := range list {
		ok, err := s.maySeeApproval(r.Context(), r, v, a)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// adminOnly serves h to admins; others get 403 (the page exists for
// everyone, it holds nothing of theirs).
func (s *Server) adminOnly(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, v visitor) {
		if !s.admin(r, v) {
			s.fail(w, r, v, http.StatusForbidden, "Only console admins (an API key, or console.admins) see this page.")
			return
		}
		h(w, r, v)
	}
}
