// Package governance holds what bounds brain's spending: budgets per
// person, channel, agent and schedule, checked before each model call
// against the spend every replica records in the store (engine.Spend), and
// adjusted by admins with each change in the audit trail.
//
// It imports bot/audit, bot/config, engine and store, nothing else of bot.
package governance

import (
	"context"
	"fmt"
	"strings"
	"time"

	"brain/bot/audit"
	"brain/bot/config"
	"brain/engine"
	"brain/store"
)

// noticeShare is the share of a budget spent at which the person is told
// (once per budget and period).
const noticeShare = 0.8

// Budgets is engine.Spend over the configured budgets and the limits
// admins set (store.Spending).
type Budgets struct {
	Store  store.Spending
	Limits []config.BudgetConfig
	// Prices are each agent's model's price; spend of an agent without a
	// price counts tokens only.
	Prices map[string]*config.PriceConfig
	// Raisers says who can raise a budget, for the stop message.
	Raisers string
	Audit   *audit.Recorder
	Now     func() time.Time
}

var _ engine.Spend = (*Budgets)(nil)

// Budget is one budget as it stands for one subject.
type Budget struct {
	Scope, Subject, Period string
	Tokens                 int64   // limit (0: none)
	Cost                   float64 // limit in US dollars (0: none)
	SpentTokens            int64
	SpentCost              float64
	Resets                 time.Time
	// SetBy is the admin who set this limit ("" for the config's).
	SetBy string
}

// Share is the larger of the spent shares of its limits.
func (b Budget) Share() float64 {
	s := 0.0
	if b.Tokens > 0 {
		s = float64(b.SpentTokens) / float64(b.Tokens)
	}
	if b.Cost > 0 {
		s = max(s, b.SpentCost/b.Cost)
	}
	return s
}

// Subjects are whom a session's spend counts against, by scope: the
// person who started it, its channel (Slack channel, GitHub repository),
// its agent, and its schedule.
func Subjects(s engine.Session) map[string]string {
	out := map[string]string{store.SpendAgent: s.Agent}
	if s.Origin == engine.OriginSchedule {
		out[store.SpendSchedule] = s.StartedBy
	} else if s.StartedBy != "" {
		out[store.SpendPerson] = s.StartedBy
	}
	if ch := channelOf(s.ThreadKey); ch != "" {
		out[store.SpendChannel] = ch
	}
	return out
}

// channelOf is the channel part of a thread key: slack:TEAM:CHANNEL of a
// Slack thread, github:OWNER/REPO of a GitHub conversation; "" otherwise.
func channelOf(key string) string {
	switch {
	case strings.HasPrefix(key, "slack:"):
		parts := strings.SplitN(key, ":", 4)
		if len(parts) == 4 {
			return strings.Join(parts[:3], ":")
		}
	case strings.HasPrefix(key, "github:"):
		if i := strings.LastIndex(key, "#"); i > 0 {
			return key[:i]
		}
	}
	return ""
}

// PeriodStart is when the period holding now began, and when the next
// begins (UTC).
func PeriodStart(period string, now time.Time) (start, next time.Time) {
	now = now.UTC()
	if period == config.PeriodMonth {
		start = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
	start = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// For is every budget that applies to a session's model call, with what
// was spent against it.
func (b *Budgets) For(ctx context.Context, s engine.Session) ([]Budget, error) {
	set, err := b.Store.BudgetLimits(ctx)
	if err != nil {
		return nil, err
	}
	now := b.Now()
	var out []Budget
	subjects := Subjects(s)
	for _, scope := range []string{store.SpendPerson, store.SpendChannel, store.SpendAgent, store.SpendSchedule} {
		subject := subjects[scope]
		if subject == "" {
			continue
		}
		for _, period := range []string{config.PeriodDay, config.PeriodMonth} {
			lim, ok := b.limit(set, scope, subject, period)
			if !ok {
				continue
			}
			start, next := PeriodStart(period, now)
			lim.SpentTokens, lim.SpentCost, err = b.Store.SpentSince(ctx, scope, subject, start)
			if err != nil {
				return nil, err
			}
			lim.Resets = next
			out = append(out, lim)
		}
	}
	return out, nil
}

// limit is the limit of one budget: an admin's for the subject, else the
// config's for it, else an admin's for every subject, else the config's.
func (b *Budgets) limit(set []store.BudgetLimit, scope, subject, period string) (Budget, bool) {
	for _, want := range []string{subject, ""} {
		for _, l := range set {
			if l.Scope == scope && l.Subject == want && l.Period == period {
				return Budget{Scope: scope, Subject: subject, Period: period, Tokens: l.Tokens, Cost: l.Cost, SetBy: l.SetBy}, true
			}
		}
		for _, c := range b.Limits {
			if c.Scope == scope && c.Subject == want && c.Period == period {
				return Budget{Scope: scope, Subject: subject, Period: period, Tokens: c.Tokens, Cost: c.Cost}, true
			}
		}
	}
	return Budget{}, false
}

// Allow stops the call when a budget is spent, and gives the 80% notice
// once per budget and period.
func (b *Budgets) Allow(ctx context.Context, call engine.SpendCall) (string, error) {
	bs, err := b.For(ctx, call.Session)
	if err != nil {
		return "", fmt.Errorf("check budgets: %w", err)
	}
	var notices []string
	for _, bu := range bs {
		share := bu.Share()
		if share >= 1 {
			return "", &engine.BudgetStop{Message: b.stopMessage(bu)}
		}
		if share < noticeShare {
			continue
		}
		start, _ := PeriodStart(bu.Period, b.Now())
		key := strings.Join([]string{bu.Scope, bu.Subject, bu.Period, start.Format(time.DateOnly)}, "/")
		first, err := b.Store.MarkNotice(ctx, key, b.Now())
		if err != nil {
			return "", fmt.Errorf("budget notice: %w", err)
		}
		if first {
			notices = append(notices, fmt.Sprintf("Budget notice: %s (%s). It resets %s.", describe(bu), spent(bu), when(bu.Resets)))
		}
	}
	return strings.Join(notices, "\n"), nil
}

// Spent records a model call's spend against every subject at once.
func (b *Budgets) Spent(ctx context.Context, call engine.SpendCall, u engine.Usage) error {
	sub := Subjects(call.Session)
	cost := 0.0
	if p := b.Prices[call.Agent]; p != nil {
		cost = p.Cost(u.UncachedInputTokens(), u.CacheReadTokens, u.CacheWriteTokens, u.OutputTokens)
	}
	return b.Store.RecordSpend(ctx, store.SpendRecord{
		At: b.Now(), SessionID: call.Session.ID,
		Person: sub[store.SpendPerson], Channel: sub[store.SpendChannel], Agent: sub[store.SpendAgent], Schedule: sub[store.SpendSchedule],
		Tokens: u.InputTokens + u.OutputTokens, Cost: cost,
	})
}

func (b *Budgets) stopMessage(bu Budget) string {
	who := b.Raisers
	if who == "" {
		who = "an admin"
	}
	return fmt.Sprintf("Stopped: %s is used up (%s). It resets %s; %s can raise it. Then resume with retry to run this message.",
		describe(bu), spent(bu), when(bu.Resets), who)
}

func describe(bu Budget) string {
	period := "daily"
	if bu.Period == config.PeriodMonth {
		period = "monthly"
	}
	return fmt.Sprintf("the %s budget of %s %s", period, bu.Scope, bu.Subject)
}

func spent(bu Budget) string {
	var parts []string
	if bu.Tokens > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d tokens", bu.SpentTokens, bu.Tokens))
	}
	if bu.Cost > 0 {
		parts = append(parts, fmt.Sprintf("$%.2f of $%.2f", bu.SpentCost, bu.Cost))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" spent, %.0f%%", bu.Share()*100)
}

func when(t time.Time) string { return "at " + t.UTC().Format("2006-01-02 15:04 UTC") }

// Raise sets a budget's limit as an admin asked, with the reason, and
// records it in the audit trail first: a raise not audited is not made.
func (b *Budgets) Raise(ctx context.Context, l store.BudgetLimit) error {
	if l.Reason == "" {
		return engine.Errorf(engine.CodeInvalid, "a reason is required to change a budget")
	}
	if _, err := store.SpendColumn(l.Scope); err != nil {
		return engine.Errorf(engine.CodeInvalid, "scope must be person, channel, agent or schedule")
	}
	if l.Period != config.PeriodDay && l.Period != config.PeriodMonth {
		return engine.Errorf(engine.CodeInvalid, "period must be day or month")
	}
	if l.Tokens < 0 || l.Cost < 0 {
		return engine.Errorf(engine.CodeInvalid, "limits must not be negative")
	}
	l.SetAt = b.Now()
	if err := b.Audit.Record(ctx, l.SetBy, audit.ActionBudgetOverride, l.Scope+"/"+l.Subject+"/"+l.Period,
		map[string]any{"tokens": l.Tokens, "cost": l.Cost, "reason": l.Reason}); err != nil {
		return err
	}
	return b.Store.SetBudgetLimit(ctx, l)
}

// Set lists the limits admins set.
func (b *Budgets) Set(ctx context.Context) ([]store.BudgetLimit, error) {
	return b.Store.BudgetLimits(ctx)
}

// Named is every budget with a named subject (the config's and the ones
// admins set), with what was spent against it: the budgets metrics and
// the console can list without enumerating every person.
func (b *Budgets) Named(ctx context.Context) ([]Budget, error) {
	set, err := b.Store.BudgetLimits(ctx)
	if err != nil {
		return nil, err
	}
	type key struct{ scope, subject, period string }
	seen := map[key]bool{}
	var keys []key
	add := func(k key) {
		if k.subject != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, c := range b.Limits {
		add(key{c.Scope, c.Subject, c.Period})
	}
	for _, l := range set {
		add(key{l.Scope, l.Subject, l.Period})
	}
	now := b.Now()
	out := make([]Budget, 0, len(keys))
	for _, k := range keys {
		bu, _ := b.limit(set, k.scope, k.subject, k.period)
		start, next := PeriodStart(k.period, now)
		if bu.SpentTokens, bu.SpentCost, err = b.Store.SpentSince(ctx, k.scope, k.subject, start); err != nil {
			return nil, err
		}
		bu.Resets = next
		out = append(out, bu)
	}
	return out, nil
}
