package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"brain/engine"
	"brain/tools"
)

// maxComment caps an approver's comment or reason.
const maxComment = 2000

// historyStatuses are the approval statuses the history can filter by.
var historyStatuses = []engine.ApprovalStatus{engine.ApprovalApplied, engine.ApprovalDenied, engine.ApprovalExpired,
	engine.ApprovalFailed, engine.ApprovalUnconfirmed, engine.ApprovalApplying}

type approvalsView struct {
	Pending  []engine.Approval
	History  []engine.Approval
	Status   string
	Statuses []engine.ApprovalStatus
	Notice   string
}

// approvalsPage shows the pending approvals first, then the history
// (decided and expired), filtered by status.
func (s *Server) approvalsPage(w http.ResponseWriter, r *http.Request, v visitor) {
	vw := approvalsView{Status: r.URL.Query().Get("status"), Statuses: historyStatuses, Notice: r.URL.Query().Get("notice")}
	pending, err := s.cfg.Engine.Approvals(r.Context(), engine.ApprovalFilter{Statuses: []engine.ApprovalStatus{engine.ApprovalPending}, Limit: 200})
	if err != nil {
		s.internal(w, r, v, err)
		return
	}
	if vw.Pending, err = s.visibleApprovals(r, v, pending); err != nil {
		s.internal(w, r, v, err)
		return
	}
	hist := historyStatuses
	if vw.Status != "" {
		if !slices.Contains(historyStatuses, engine.ApprovalStatus(vw.Status)) {
			s.fail(w, r, v, http.StatusBadRequest, "Unknown approval status "+vw.Status+".")
			return
		}
		hist = []engine.ApprovalStatus{engine.ApprovalStatus(vw.Status)}
	}
	hist2, err := s.cfg.Engine.Approvals(r.Context(), engine.ApprovalFilter{Statuses: hist, Limit: 200})
	if err == nil {
		vw.History, err = s.visibleApprovals(r, v, hist2)
	}
	if err != nil {
		s.internal(w, r, v, err)
		return
	}
	s.render(w, r, http.StatusOK, "approvals", v, vw)
}

type approvalView struct {
	Approval engine.Approval
	Notice   string
}

func (s *Server) approvalPage(w http.ResponseWriter, r *http.Request, v visitor) {
	a, ok := s.approval(w, r, v)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "approval", v, approvalView{Approval: a, Notice: r.URL.Query().Get("notice")})
}

// decide records the visitor's decision through the engine, under its
// rules: a key holder decides as the key's name (and may decide API and
// console sessions' approvals), a Slack sign-in as the Slack user; the
// first decision wins and a later one is told who decided.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, v visitor) {
	if _, ok := s.approval(w, r, v); !ok {
		return
	}
	id := r.PathValue("id")
	decision := r.PostForm.Get("decision")
	if decision != engine.DecisionApprove && decision != engine.DecisionDeny {
		s.fail(w, r, v, http.StatusBadRequest, `The decision must be "approve" or "deny".`)
		return
	}
	comment := strings.TrimSpace(r.PostForm.Get("comment"))
	if len(comment) > maxComment {
		s.fail(w, r, v, http.StatusBadRequest, "The comment is too long (at most 2000 bytes).")
		return
	}
	by, viaKey := v.identity()
	a, err := s.cfg.Engine.Decide(r.Context(), id, engine.Decision{Approve: decision == engine.DecisionApprove, By: by, ViaAPI: viaKey,
		Surface: signInSurface(viaKey), Comment: comment})
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	s.log.Info("console decided an approval", tools.LogSession, a.SessionID, tools.LogApproval, id, tools.LogDecision, decision, tools.LogWho, by)
	s.backTo(w, r, "/approvals/"+url.PathEscape(id), decision+"d")
}

func (s *Server) retry(w http.ResponseWriter, r *http.Request, v visitor) {
	if _, ok := s.approval(w, r, v); !ok {
		return
	}
	id := r.PathValue("id")
	by, viaKey := v.identity()
	if _, err := s.cfg.Engine.Retry(r.Context(), id, engine.Decision{By: by, ViaAPI: viaKey}); err != nil {
		s.engineError(w, r, v, err)
		return
	}
	s.backTo(w, r, "/approvals/"+url.PathEscape(id), "retrying")
}

// backTo redirects to the form's "back" page (a console path) or def,
// with a notice.
func (s *Server) backTo(w http.ResponseWriter, r *http.Request, def, notice string) {
	back := def
	if b := r.PostForm.Get("back"); b != "" {
		back = safeNext(b)
	}
	sep := "?"
	if strings.Contains(back, "?") {
		sep = "&"
	}
	http.Redirect(w, r, back+sep+"notice="+url.QueryEscape(notice), http.StatusSeeOther)
}

// signInSurface is where a console visitor's name is an identity: a key
// holder acts as the key's name (the API's), anyone else signed in with
// Slack.
func signInSurface(viaKey bool) string {
	if viaKey {
		return engine.SurfaceAPI
	}
	return engine.SurfaceSlack
}
