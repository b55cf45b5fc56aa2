package api

import (
	"context"
	"net/http"
	"time"

	"brain/engine"
	"brain/store"
)

// Budgets are the limits admins set on spending (bot/governance).
type Budgets interface {
	// Raise sets one budget's limit; the reason is required and the
	// change is in the audit trail before it takes effect.
	Raise(ctx context.Context, l store.BudgetLimit) error
	// Set lists the limits admins set.
	Set(ctx context.Context) ([]store.BudgetLimit, error)
}

// budgetWire is a budget limit on the wire.
type budgetWire struct {
	Scope   string    `json:"scope"`
	Subject string    `json:"subject"`
	Period  string    `json:"period"`
	Tokens  int64     `json:"tokens"`
	Cost    float64   `json:"cost"`
	Reason  string    `json:"reason"`
	SetBy   string    `json:"set_by,omitempty"`
	SetAt   time.Time `json:"set_at,omitzero"`
}

func (a *Server) listBudgets(w http.ResponseWriter, r *http.Request) {
	if a.budgets == nil {
		writeJSON(w, http.StatusOK, map[string]any{"budgets": []budgetWire{}})
		return
	}
	ls, err := a.budgets.Set(r.Context())
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	out := make([]budgetWire, len(ls))
	for i, l := range ls {
		out[i] = budgetWire{Scope: l.Scope, Subject: l.Subject, Period: l.Period, Tokens: l.Tokens, Cost: l.Cost,
			Reason: l.Reason, SetBy: l.SetBy, SetAt: l.SetAt}
	}
	writeJSON(w, http.StatusOK, map[string]any{"budgets": out})
}

// setBudget is an admin's change of one budget's limit: every API key
// holder is an admin, as in the console. It is recorded as the key's.
func (a *Server) setBudget(w http.ResponseWriter, r *http.Request) {
	if a.budgets == nil {
		writeError(w, r, a.log, engine.Errorf(engine.CodeConflict, "no budgets are configured (budgets in the config)"))
		return
	}
	var req budgetWire
	if err := decodeBody(w, r, a.maxBody, &req); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	by, key, err := a.decider(r, req.SetBy, "changes budgets")
	if err != nil {
		writeError(w, r, a.log, err)
		return
	}
	if key != "" && by != key {
		by += " via key:" + key
	}
	if by == "" {
		by = "local"
	}
	l := store.BudgetLimit{Scope: req.Scope, Subject: req.Subject, Period: req.Period, Tokens: req.Tokens, Cost: req.Cost,
		Reason: req.Reason, SetBy: by}
	if err := a.budgets.Raise(r.Context(), l); err != nil {
		writeError(w, r, a.log, err)
		return
	}
	req.SetBy = by
	writeJSON(w, http.StatusOK, req)
}
