package api

import (
	"context"
	"net/http"

	"brain/engine"
)

// Connector starts the OAuth flow that connects an account (bot/connect).
type Connector interface {
	// Start returns the URL to send the person to; personID "" connects
	// the workspace's own account.
	Start(ctx context.Context, personID, provider string) (string, error)
}

// connectLinkTTL is how long the URL startConnect returns stays usable
// (bot/connect's flow lifetime).
const connectLinkTTL = 15 * 60

// startConnect answers POST /v1/connections/connect {provider, person}:
// the URL to open in a browser to connect the account. The flow is bound
// to the person named (or the workspace), so whoever finishes it connects
// that holder.
func (a *Server) startConnect(w http.ResponseWriter, r *http.Request) {
	if a.connector == nil {
		writeError(w, r, a.log, engine.Errorf(engine.CodeNotFound, "no server with auth: oauth is configured"))
		return
	}
	var req struct {
		Provider string `json:"provider"`
		Person   string `json:"person"`
	}
	if err := decodeBody(w, r, a.maxBody, &req); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if err := validName("provider", req.Provider); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if len(req.Person) > maxNameLen {
		writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "person is over %d bytes", maxNameLen))
		return
	}
	if req.Person != "" && a.accounts != nil {
		if _, err := a.accounts.Person(r.Context(), req.Person); err != nil {
			writeError(w, r, a.log, err)
			return
		}
	}
	u, err := a.connector.Start(r.Context(), req.Person, req.Provider)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"url": u, "expires_in": connectLinkTTL})
}
