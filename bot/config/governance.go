package config

import (
	"fmt"
	"time"
)

// AuditConfig is the audit block: how the audit trail is sealed.
type AuditConfig struct {
	// SigningKeyFile is an Ed25519 private key (PKCS#8 PEM, as `openssl
	// genpkey -algorithm ed25519` writes it). Set, the chain's head is
	// sealed with a signature every SealEvery; empty, entries are
	// hash-chained but never signed.
	SigningKeyFile string `yaml:"signing_key_file"`
	// SealEvery is how often the head is sealed (default 1h).
	SealEvery Duration `yaml:"seal_every"`
}

// BudgetConfig is one entry of budgets: a limit on what model calls may
// spend for one scope in one period.
type BudgetConfig struct {
	// Scope is what the limit counts: person (the platform user who
	// started the session), channel (Slack channel, Linear team, GitHub
	// repository), agent or schedule.
	Scope string `yaml:"scope"`
	// Subject, when set, limits that one person, channel, agent or
	// schedule; empty applies the limit to each of them separately.
	Subject string `yaml:"subject"`
	// Period is day or month (UTC).
	Period string `yaml:"period"`
	// Tokens and Cost are the limits (0: none); Cost is in US dollars,
	// from models.NAME.price.
	Tokens int64   `yaml:"tokens"`
	Cost   float64 `yaml:"cost"`
}

// RateLimitsConfig is the rate_limits block: new turns per minute.
type RateLimitsConfig struct {
	// PersonPerMinute and ChannelPerMinute are how many inputs a person
	// or a channel may start per minute (0: unlimited).
	PersonPerMinute  int `yaml:"person_per_minute"`
	ChannelPerMinute int `yaml:"channel_per_minute"`
}

// RetentionConfig is the retention block: how long records are kept (0:
// forever).
type RetentionConfig struct {
	// Sessions are deleted this long after their last activity, with their
	// events, results and approvals.
	Sessions Duration `yaml:"sessions"`
	// Files kept from shared attachments are deleted this long after
	// they were stored.
	Files Duration `yaml:"files"`
	// Audit entries older than this are pruned.
	Audit Duration `yaml:"audit"`
	// Every is how often the retention job runs (default 1h); Batch how
	// many records it deletes per transaction (default 500).
	Every Duration `yaml:"every"`
	Batch int      `yaml:"batch"`
	// Duty is the share of the time the job works while turns run (0:
	// the default 0.1): it deletes in the gaps between turns.
	Duty float64 `yaml:"duty"`
}

// Budget scopes and periods.
const (
	ScopePerson   = "person"
	ScopeChannel  = "channel"
	ScopeAgent    = "agent"
	ScopeSchedule = "schedule"
	PeriodDay     = "day"
	PeriodMonth   = "month"
)

const (
	defaultSealEvery      = time.Hour
	defaultRetentionEvery = time.Hour
	defaultRetentionBatch = 500
)

func (c *Config) applyGovernanceDefaults() {
	setDefault(&c.Audit.SealEvery, Duration(defaultSealEvery))
	setDefault(&c.Retention.Every, Duration(defaultRetentionEvery))
	setDefault(&c.Retention.Batch, defaultRetentionBatch)
}

func (c *Config) validateGovernance(p *problems) {
	atLeast(p, "audit.seal_every", int64(c.Audit.SealEvery), int64(time.Minute), "at least 1m")
	seen := map[string]int{}
	for i, b := range c.Budgets {
		key := fmt.Sprintf("budgets[%d]", i)
		oneOf(p, key+".scope", b.Scope, ScopePerson, ScopeChannel, ScopeAgent, ScopeSchedule)
		oneOf(p, key+".period", b.Period, PeriodDay, PeriodMonth)
		if b.Tokens < 0 {
			p.add(key+".tokens", "must not be negative")
		}
		if b.Cost < 0 {
			p.add(key+".cost", "must not be negative")
		}
		if b.Tokens == 0 && b.Cost == 0 {
			p.add(key, "sets neither tokens nor cost")
		}
		if b.Cost > 0 && !c.anyPrice() {
			p.add(key+".cost", "set, but no model has a price (models.NAME.price): spend cannot be counted in dollars")
		}
		id := b.Scope + "/" + b.Subject + "/" + b.Period
		if j, dup := seen[id]; dup {
			p.add(key, "the same scope, subject and period as budgets[%d]", j)
		}
		seen[id] = i
	}
	atLeast(p, "rate_limits.person_per_minute", int64(c.RateLimits.PersonPerMinute), 0, "")
	atLeast(p, "rate_limits.channel_per_minute", int64(c.RateLimits.ChannelPerMinute), 0, "")
	r := c.Retention
	for _, d := range []struct {
		key string
		v   Duration
	}{{"retention.sessions", r.Sessions}, {"retention.files", r.Files}, {"retention.audit", r.Audit}} {
		if d.v != 0 {
			atLeast(p, d.key, int64(d.v), int64(time.Hour), "at least 1h, or 0 to keep forever")
		}
	}
	atLeast(p, "retention.every", int64(r.Every), int64(time.Minute), "at least 1m")
	atLeast(p, "retention.batch", int64(r.Batch), 1, "")
	if r.Batch > 100000 {
		p.add("retention.batch", "at most 100000 (a batch is one transaction)")
	}
	if r.Duty < 0 || r.Duty > 1 {
		p.add("retention.duty", "between 0 and 1 (a share of the time; 0: the default 0.1)")
	}
}

func (c *Config) anyPrice() bool {
	for _, m := range c.Models {
		if m.Price != nil {
			return true
		}
	}
	return false
}
