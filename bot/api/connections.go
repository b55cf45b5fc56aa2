package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"brain/engine"
	"brain/store"
)

// People and connections: admin routes (every API key is an admin here).
// A connection is shown by its existence, account, scope, expiry and
// status, never its tokens.

// Accounts is what the people and connection routes ask of the store.
type Accounts interface {
	store.People
	// ConnectionsOf and RevokeConnection of store.Connections.
	ConnectionsOf(ctx context.Context, personID string, all bool) ([]store.Connection, error)
	ConnectionByID(ctx context.Context, id string) (store.Connection, error)
	RevokeConnection(ctx context.Context, now time.Time, id, problem string) (bool, error)
	MarkServiceAccount(ctx context.Context, now time.Time, id string, enabled bool) (bool, error)
}

// maxNameLen bounds ids, names and identities sent to these routes.
const maxNameLen = 200

// connectionView is a connection as the API shows it: no tokens.
type connectionView struct {
	ID             string     `json:"id"`
	PersonID       string     `json:"person_id"`
	Provider       string     `json:"provider"`
	Account        string     `json:"account"`
	Scope          string     `json:"scope"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
	Status         string     `json:"status"`
	Problem        string     `json:"problem,omitempty"`
	ServiceAccount bool       `json:"service_account"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

func viewConnection(c store.Connection) connectionView {
	v := connectionView{ID: c.ID, PersonID: c.PersonID, Provider: c.Provider, Account: c.Account, Scope: c.Scope,
		Status: c.Status, Problem: c.Problem, ServiceAccount: c.ServiceAccount, UpdatedAt: c.UpdatedAt}
	if !c.ExpiresAt.IsZero() {
		e := c.ExpiresAt
		v.ExpiresAt = &e
	}
	return v
}

func (a *Server) accountsOr404(w http.ResponseWriter, r *http.Request) bool {
	if a.accounts == nil {
		writeError(w, r, a.log, engine.Errorf(engine.CodeNotFound, "people and connections are not kept by this server"))
		return false
	}
	return true
}

// listConnections answers GET /v1/connections[?person=ID].
func (a *Server) listConnections(w http.ResponseWriter, r *http.Request) {
	if !a.accountsOr404(w, r) {
		return
	}
	person, all := r.URL.Query().Get("person"), !r.URL.Query().Has("person")
	cs, err := a.accounts.ConnectionsOf(r.Context(), person, all)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	out := make([]connectionView, 0, len(cs))
	for _, c := range cs {
		out = append(out, viewConnection(c))
	}
	writeJSON(w, http.StatusOK, map[string]any{"connections": out})
}

// revokeConnection answers POST /v1/connections/{id}/revoke: the tokens
// are forgotten and the connection shows as revoked.
func (a *Server) revokeConnection(w http.ResponseWriter, r *http.Request) {
	if !a.accountsOr404(w, r) {
		return
	}
	var req struct {
		By string `json:"by"`
	}
	if body, err := readBody(w, r, a.maxBody); err != nil {
		writeError(w, r, a.log, err)
		return
	} else if len(strings.TrimSpace(string(body))) > 0 {
		if err := decodeJSON(body, &req); err != nil {
			writeError(w, r, a.log, err)
			return
		}
	}
	if len(req.By) > maxNameLen {
		writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "by is over %d bytes", maxNameLen))
		return
	}
	by, err := a.actingAs(r, req.By, "revokes")
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if by == "" {
		by = "an admin"
	}
	id := r.PathValue("id")
	if _, err := a.accounts.RevokeConnection(r.Context(), a.now(), id, "revoked by "+by); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	c, err := a.accounts.ConnectionByID(r.Context(), id)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, viewConnection(c))
}

// listPeople answers GET /v1/people.
func (a *Server) listPeople(w http.ResponseWriter, r *http.Request) {
	if !a.accountsOr404(w, r) {
		return
	}
	ps, err := a.accounts.People(r.Context())
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if ps == nil {
		ps = []store.Person{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"people": viewPeople(ps)})
}

type personView struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Identities []identityView `json:"identities"`
}

type identityView struct {
	Surface    string `json:"surface"`
	ExternalID string `json:"external_id"`
}

func viewPeople(ps []store.Person) []personView {
	out := make([]personView, 0, len(ps))
	for _, p := range ps {
		v := personView{ID: p.ID, Name: p.Name, Identities: []identityView{}}
		for _, id := range p.Identities {
			v.Identities = append(v.Identities, identityView{id.Surface, id.ExternalID})
		}
		out = append(out, v)
	}
	return out
}

func validName(field, v string) error {
	switch {
	case v == "":
		return engine.Errorf(engine.CodeInvalid, "%s is required", field)
	case len(v) > maxNameLen:
		return engine.Errorf(engine.CodeInvalid, "%s is over %d bytes", field, maxNameLen)
	case strings.ContainsAny(v, "\x00\r\n"):
		return engine.Errorf(engine.CodeInvalid, "%s has control characters", field)
	}
	return nil
}

// savePerson answers POST /v1/people: {id, name} creates or renames.
func (a *Server) savePerson(w http.ResponseWriter, r *http.Request) {
	if !a.accountsOr404(w, r) {
		return
	}
	var req struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := decodeBody(w, r, a.maxBody, &req); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if err := validName("id", req.ID); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if len(req.Name) > maxNameLen {
		writeError(w, r, a.log, engine.Errorf(engine.CodeInvalid, "name is over %d bytes", maxNameLen))
		return
	}
	if err := a.accounts.SavePerson(r.Context(), store.Person{ID: req.ID, Name: req.Name, UpdatedAt: a.now()}); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	a.writePerson(w, r, req.ID, http.StatusOK)
}

// linkIdentity answers POST /v1/people/{id}/identities.
func (a *Server) linkIdentity(w http.ResponseWriter, r *http.Request) {
	if !a.accountsOr404(w, r) {
		return
	}
	var req identityView
	if err := decodeBody(w, r, a.maxBody, &req); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	for field, v := range map[string]string{"surface": req.Surface, "external_id": req.ExternalID} {
		if err := validName(field, v); err != nil {
			writeError(w, r, a.log, err)
			return
		}
	}
	id := r.PathValue("id")
	if err := a.accounts.LinkIdentity(r.Context(), a.now(), id, store.Identity{Surface: req.Surface, ExternalID: req.ExternalID}); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	a.writePerson(w, r, id, http.StatusOK)
}

// erasePerson answers DELETE /v1/people/{id} (204) and POST
// /v1/people/{id}/erase (what went): an admin's act (every API key
// holder), recorded as the key's.
func (a *Server) erasePerson(w http.ResponseWriter, r *http.Request) {
	if !a.accountsOr404(w, r) {
		return
	}
	id := r.PathValue("id")
	var out store.PersonErased
	if a.eraser == nil {
		if err := a.accounts.ErasePerson(r.Context(), id); err != nil {
			writeError(w, r, a.log, err)
			return
		}
	} else {
		by, _, err := a.decider(r, "", "erases people")
		if err != nil {
			writeError(w, r, a.log, err)
			return
		}
		if by == "" {
			by = "local"
		}
		if out, err = a.eraser.Erase(r.Context(), by, id); err != nil {
			writeError(w, r, a.log, err)
			return
		}
	}
	if r.Method == http.MethodDelete {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *Server) writePerson(w http.ResponseWriter, r *http.Request, id string, status int) {
	p, err := a.accounts.Person(r.Context(), id)
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	writeJSON(w, status, viewPeople([]store.Person{p})[0])
}
