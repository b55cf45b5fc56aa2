package web

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"brain/store"
	"brain/tools"
)

// The budgets page (admins): spend against each named budget in its
// current period, and a form to raise (or lower) one with a reason, which
// bot/governance records in the audit trail before the limit changes.

// Budgets is what the budgets page shows and changes (bot/governance's
// Budgets, adapted by bot).
type Budgets interface {
	// Standing is every named budget with what was spent against it in
	// its current period.
	Standing(ctx context.Context) ([]BudgetStanding, error)
	// Raise sets one budget's limit; the reason is required and the
	// change is audited first.
	Raise(ctx context.Context, l store.BudgetLimit) error
}

// BudgetStanding is one budget as it stands.
type BudgetStanding struct {
	Scope, Subject, Period string
	Tokens                 int64   // limit (0: none)
	Cost                   float64 // limit in US dollars (0: none)
	SpentTokens            int64
	SpentCost              float64
	Resets                 time.Time
	SetBy                  string // the admin who set it ("" the config's)
}

// Percent is the larger spent share of its limits, in percent.
func (b BudgetStanding) Percent() int {
	p := 0.0
	if b.Tokens > 0 {
		p = float64(b.SpentTokens) / float64(b.Tokens)
	}
	if b.Cost > 0 {
		p = max(p, b.SpentCost/b.Cost)
	}
	return int(p * 100)
}

type budgetsView struct {
	Budgets []BudgetStanding
	Notice  string
}

func (s *Server) budgetsPage(w http.ResponseWriter, r *http.Request, v visitor) {
	if s.cfg.Budgets == nil {
		s.render(w, r, http.StatusOK, "budgets", v, budgetsView{Notice: "No budgets are configured (budgets in the config)."})
		return
	}
	list, err := s.cfg.Budgets.Standing(r.Context())
	if err != nil {
		s.engineError(w, r, v, err)
		return
	}
	s.render(w, r, http.StatusOK, "budgets", v, budgetsView{Budgets: list, Notice: r.URL.Query().Get("notice")})
}

// raiseBudget saves an admin's new limit for one budget, with the reason.
func (s *Server) raiseBudget(w http.ResponseWriter, r *http.Request, v visitor) {
	if s.cfg.Budgets == nil {
		http.Redirect(w, r, "/budgets?"+url.Values{"notice": {"Nothing was changed: no budgets are configured."}}.Encode(), http.StatusSeeOther)
		return
	}
	f := r.PostForm
	tokens, terr := parseLimit(f.Get("tokens"), func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
	cost, cerr := parseLimit(f.Get("cost"), func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	if terr != nil || cerr != nil {
		s.fail(w, r, v, http.StatusBadRequest, "The limits must be numbers (empty for none).")
		return
	}
	l := store.BudgetLimit{Scope: f.Get("scope"), Subject: f.Get("subject"), Period: f.Get("period"),
		Tokens: tokens, Cost: cost, Reason: strings.TrimSpace(f.Get("reason")), SetBy: v.name}
	if err := s.cfg.Budgets.Raise(r.Context(), l); err != nil {
		s.engineError(w, r, v, err)
		return
	}
	s.log.Info("console set a budget", tools.LogPath, l.Scope+"/"+l.Subject+"/"+l.Period, tools.LogWho, v.name)
	http.Redirect(w, r, "/budgets?"+url.Values{"notice": {"Set the " + l.Period + " budget of " + l.Scope + " " + l.Subject + "."}}.Encode(), http.StatusSeeOther)
}

func parseLimit[T int64 | float64](s string, parse func(string) (T, error)) (T, error) {
	if s = strings.TrimSpace(s); s == "" {
		return 0, nil
	}
	return parse(s)
}
