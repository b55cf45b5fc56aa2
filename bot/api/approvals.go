package api

import (
	"net/http"
	"strconv"
	"strings"

	"brain/engine"
)

var approvalStatuses = map[engine.ApprovalStatus]bool{
	engine.ApprovalPending: true, engine.ApprovalApproved: true, engine.ApprovalDenied: true,
	engine.ApprovalExpired: true, engine.ApprovalApplying: true, engine.ApprovalApplied: true,
	engine.ApprovalFailed: true, engine.ApprovalUnconfirmed: true,
}

// listApprovals answers GET /v1/approvals?status=pending,unconfirmed&session_id=&limit=.
func (a *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := engine.ApprovalFilter{SessionID: q.Get("session_id"), Limit: 100}
	if v := q.Get("status"); v != "" {
		for _, s := range strings.Split(v, ",") {
			st := engine.ApprovalStatus(strings.TrimSpace(s))
			if !approvalStatuses[st] {
				writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "status %q is not an approval status", s))
				return
			}
			f.Statuses = append(f.Statuses, st)
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "limit must be 1..1000"))
			return
		}
		f.Limit = n
	}
	list, err := a.engine.Approvals(r.Context(), f)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if list == nil {
		list = []engine.Approval{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": list})
}

func (a *Server) getApproval(w http.ResponseWriter, r *http.Request) {
	ap, err := a.engine.Approval(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, ap)
}

// decisionRequest is the body of POST /v1/approvals/{id}/decision. With
// API keys, by defaults to the key's name and may name another only with
// act_for (see Server.decider).
type decisionRequest struct {
	Decision string `json:"decision"`
	By       string `json:"by"`
	// Comment is the approver's comment (approve) or the reason (deny).
	Comment string `json:"comment"`
}

// decide records the first decision; a later one gets 409 naming who
// decided. Approving starts the apply; the answer shows status applying.
// The engine then checks that by may decide (approvers, else the starter).
func (a *Server) decide(w http.ResponseWriter, r *http.Request) {
	var req decisionRequest
	if err := decodeBody(w, r, a.maxBody, &req); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if req.Decision != "approve" && req.Decision != "deny" {
		writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, `decision must be "approve" or "deny"`))
		return
	}
	by, key, err := a.decider(r, req.By, "decides")
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	ap, err := a.engine.Decide(r.Context(), r.PathValue("id"), engine.Decision{Approve: req.Decision == "approve", By: by, Key: key, ViaAPI: true, Comment: req.Comment})
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, ap)
}

// retry re-runs an unconfirmed or failed apply with the same decision id;
// by follows decide's rules.
func (a *Server) retry(w http.ResponseWriter, r *http.Request) {
	var req struct {
		By string `json:"by"`
	}
	if err := decodeBody(w, r, a.maxBody, &req); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	by, key, err := a.decider(r, req.By, "decides")
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	ap, err := a.engine.Retry(r.Context(), r.PathValue("id"), engine.Decision{By: by, Key: key, ViaAPI: true})
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, ap)
}
