package store

import (
	"context"
	"math"
	"time"
)

// SpendRecord is what one model call spent, and whom it counts against:
// the budgets of its person, channel, agent and schedule (empty: none).
type SpendRecord struct {
	At        time.Time
	SessionID string
	Person    string
	Channel   string
	Agent     string
	Schedule  string
	Tokens    int64
	Cost      float64 // US dollars
}

// Spend scopes: the SpendRecord field a budget counts.
const (
	SpendPerson   = "person"
	SpendChannel  = "channel"
	SpendAgent    = "agent"
	SpendSchedule = "schedule"
)

// BudgetLimit is a limit an admin set for one budget, replacing the
// config's.
type BudgetLimit struct {
	Scope, Subject, Period string
	Tokens                 int64
	Cost                   float64
	SetBy, Reason          string
	SetAt                  time.Time
}

// Spending keeps spend against budgets, durably, so every replica checks
// the same totals.
type Spending interface {
	// RecordSpend appends one model call's spend.
	RecordSpend(ctx context.Context, r SpendRecord) error
	// SpentSince sums the spend of subject in scope (a SpendPerson ...
	// constant) at or after since.
	SpentSince(ctx context.Context, scope, subject string, since time.Time) (tokens int64, cost float64, err error)
	// SetBudgetLimit records l, replacing the one for its scope, subject
	// and period.
	SetBudgetLimit(ctx context.Context, l BudgetLimit) error
	// BudgetLimits lists the limits admins set.
	BudgetLimits(ctx context.Context) ([]BudgetLimit, error)
	// MarkNotice records that the notice key was sent, and reports whether
	// this call was the first to (one notice per key across replicas).
	MarkNotice(ctx context.Context, key string, at time.Time) (first bool, err error)
	// PruneSpend deletes up to limit spend records older than before.
	PruneSpend(ctx context.Context, before time.Time, limit int) (int, error)
}

// SpendColumn is the spend table's column for scope; unknown scopes are
// refused (drivers build their query from it, never from caller text).
func SpendColumn(scope string) (string, error) {
	switch scope {
	case SpendPerson, SpendChannel, SpendAgent, SpendSchedule:
		return scope, nil
	}
	return "", invariant("unknown spend scope %q", scope)
}

// Micros is dollars as the stores keep them: whole millionths, so sums
// are exact and both drivers add the same way.
func Micros(dollars float64) int64 { return int64(math.Round(dollars * 1e6)) }

// Dollars is Micros back in dollars.
func Dollars(micros int64) float64 { return float64(micros) / 1e6 }
