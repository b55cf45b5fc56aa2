package api

import (
	"net/http"

	"brain/engine"
)

// actionServiceAccount is the audit action of marking or unmarking a
// service account (bot/audit's ActionServiceAccount).
const actionServiceAccount = "connection.service_account"

// markServiceAccount answers POST /v1/connections/{id}/service-account
// {"enabled": bool}: an admin (every API key holder) marks a person's
// connection as its provider's service account, the one person's
// connection schedules may use, or takes the mark back. At most one per
// provider: marking a second is a conflict until the first is unmarked,
// so which account unattended work runs as is never a guess. The act is
// in the audit trail before it takes effect.
func (a *Server) markServiceAccount(w http.ResponseWriter, r *http.Request) {
	if !a.accountsOr404(w, r) {
		return
	}
	var req struct {
		Enabled *bool `json:"enabled"`
	}
	if err := decodeBody(w, r, a.maxBody, &req); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if req.Enabled == nil {
		writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "enabled is required (true or false)"))
		return
	}
	id := r.PathValue("id")
	c, err := a.accounts.ConnectionByID(r.Context(), id)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if *req.Enabled {
		if c.PersonID == "" {
			writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid,
				"connection %s is the workspace's own connection to %s: schedules use it already", id, c.Provider))
			return
		}
		all, err := a.accounts.ConnectionsOf(r.Context(), "", true)
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		for _, o := range all {
			if o.Provider == c.Provider && o.ServiceAccount && o.ID != c.ID {
				writeError(w, r, a.log, engine.Errorf(engine.CodeConflict,
					"connection %s (person %s) is the service account of %s already: unmark it first", o.ID, o.PersonID, c.Provider))
				return
			}
		}
	}
	by, key, err := a.decider(r, "", "marks service accounts")
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if by == "" {
		by = "local"
	} else if key != "" {
		by = "key:" + key
	}
	if a.audit != nil {
		detail := map[string]any{"enabled": *req.Enabled, "provider": c.Provider, "person": c.PersonID}
		if err := a.audit.Record(r.Context(), by, actionServiceAccount, id, detail); err != nil {
			writeError(w, r, a.log, err)
			return
		}
	}
	if _, err := a.accounts.MarkServiceAccount(r.Context(), a.now(), id, *req.Enabled); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if c, err = a.accounts.ConnectionByID(r.Context(), id); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, viewConnection(c))
}
