package bot

import (
	"context"
	"strings"
	"time"

	"brain/bot/api"
	"brain/bot/audit"
	"brain/bot/config"
	"brain/bot/filestore"
	"brain/bot/governance"
	"brain/bot/telemetry"
	"brain/bot/web"
	"brain/engine"
	"brain/store"
	"brain/tools"
)

// buildGovernance makes the audit recorder the API and the console record
// through and, with audit.signing_key_file set, the sealer that signs the
// chain's head every audit.seal_every (a service, started first and so
// stopped last: its final seal covers what the others recorded). The
// retention job runs when it has something to prune.
func (a *App) buildGovernance(clock func() time.Time) error {
	a.audit = &audit.Recorder{Store: a.store, Now: clock}
	a.eraser = &governance.Eraser{Store: a.store, Trail: a.audit, Now: clock}
	if fs := fileStoreOf(a.platforms); fs != nil {
		a.eraser.Files = fs
	}
	if len(a.cfg.Budgets) > 0 {
		a.budgets = &governance.Budgets{Store: a.store, Limits: a.cfg.Budgets, Prices: agentPrices(a.cfg),
			Raisers: raisers(a.cfg), Audit: a.audit, Now: clock}
	}
	if rl := a.cfg.RateLimits; rl.PersonPerMinute > 0 || rl.ChannelPerMinute > 0 {
		a.rateLimits = &governance.RateLimits{Store: a.store, PersonPerMinute: rl.PersonPerMinute, ChannelPerMinute: rl.ChannelPerMinute}
	}
	if f := a.cfg.Audit.SigningKeyFile; f != "" {
		key, err := audit.LoadPrivateKey(f)
		if err != nil {
			return err
		}
		a.sealer = &audit.Sealer{Store: a.store, Key: key, Every: a.cfg.Audit.SealEvery.Std(), Now: clock,
			Log: a.log.With(tools.LogComponent, "audit")}
	}
	r := a.cfg.Retention
	if r.Audit > 0 || r.Sessions > 0 || r.Files > 0 || len(a.cfg.Budgets) > 0 || a.rateLimits != nil {
		a.retention = &governance.Retention{Store: a.store, Leases: a.store, Audit: r.Audit.Std(), Sessions: r.Sessions.Std(),
			FilesKept: r.Files.Std(), Every: r.Every.Std(), Batch: r.Batch, Duty: r.Duty, Trail: a.audit, Now: clock,
			Log: a.log.With(tools.LogComponent, "retention")}
		if a.sealer != nil {
			key := a.sealer.Key
			a.retention.Seal = func(ctx context.Context) error {
				_, err := audit.SealHead(ctx, a.store, key, clock())
				return err
			}
		}
	}
	return nil
}

// pace is the engine's Pace: the rate limits, or nil (no limit) when the
// config sets none.
func (a *App) pace() engine.Pace {
	if a.rateLimits == nil {
		return nil
	}
	return a.rateLimits
}

// spend is the engine's Spend: the budgets, or nil (no limit) when the
// config has none (then /v1/budgets refuses changes too: a limit set
// there would never be checked).
func (a *App) spend() engine.Spend {
	if a.budgets == nil {
		return nil
	}
	return a.budgets
}

// raisers says, in a budget stop, who can raise a budget.
func raisers(cfg *config.Config) string {
	var who []string
	if len(cfg.Console.Admins) > 0 {
		who = append(who, "console.admins ("+strings.Join(cfg.Console.Admins, ", ")+")")
	}
	if len(cfg.APIKeys) > 0 {
		who = append(who, "an API key holder (PUT /v1/budgets)")
	}
	if len(who) == 0 {
		return "the operator (budgets in the config)"
	}
	return strings.Join(who, " or ")
}

// budgetsAPI is what /v1/budgets changes, nil without budgets.
func (a *App) budgetsAPI() api.Budgets {
	if a.budgets == nil {
		return nil
	}
	return a.budgets
}

// budgetsPage is the console's budgets page's view of the budgets, nil
// without budgets.
func (a *App) budgetsPage() web.Budgets {
	if a.budgets == nil {
		return nil
	}
	return consoleBudgets{a.budgets}
}

// consoleBudgets adapts governance.Budgets to the console's page.
type consoleBudgets struct{ b *governance.Budgets }

func (c consoleBudgets) Standing(ctx context.Context) ([]web.BudgetStanding, error) {
	named, err := c.b.Named(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]web.BudgetStanding, len(named))
	for i, n := range named {
		out[i] = web.BudgetStanding{Scope: n.Scope, Subject: n.Subject, Period: n.Period, Tokens: n.Tokens, Cost: n.Cost,
			SpentTokens: n.SpentTokens, SpentCost: n.SpentCost, Resets: n.Resets, SetBy: n.SetBy}
	}
	return out, nil
}

func (c consoleBudgets) Raise(ctx context.Context, l store.BudgetLimit) error {
	return c.b.Raise(ctx, l)
}

// registerGovernanceMetrics adds the audit chain's head and the spend
// against each named budget to /metrics.
func (a *App) registerGovernanceMetrics(reg *telemetry.Registry) {
	reg.GaugeFunc("brain_audit_head_seq", "Sequence number of the newest audit trail entry.", nil, func() []telemetry.Sample {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		head, err := a.store.AuditHead(ctx)
		if err != nil {
			a.log.Warn("read audit head for metrics", tools.LogErr, err)
			return nil
		}
		return []telemetry.Sample{{Value: float64(head.Seq)}}
	})
	if a.budgets == nil {
		return
	}
	reg.GaugeFunc("brain_budget_spent_ratio", "Share of each named budget spent in its current period (1 = used up).",
		[]string{"scope", "subject", "period"}, func() []telemetry.Sample {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			bs, err := a.budgets.Named(ctx)
			if err != nil {
				a.log.Warn("read budgets for metrics", tools.LogErr, err)
				return nil
			}
			out := make([]telemetry.Sample, len(bs))
			for i, b := range bs {
				out[i] = telemetry.Sample{Labels: []string{b.Scope, b.Subject, b.Period}, Value: b.Share()}
			}
			return out
		})
}

// fileStoreOf is the store of shared files a platform keeps (Slack's, in
// data_dir/files), or nil.
func fileStoreOf(platforms []Platform) *filestore.Store {
	for _, p := range platforms {
		if f, ok := p.(interface{ FileStore() *filestore.Store }); ok && f.FileStore() != nil {
			return f.FileStore()
		}
	}
	return nil
}
