package githubbridge

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	ghc "brain/channels/github"
	"brain/engine"
)

// Platform is GitHub conversations as bot's platform list sees it; once
// connected, the Bridge.
type Platform struct {
	*Bridge
	cfg   *config.Config
	hc    *http.Client
	clock func() time.Time
}

// NewPlatform is GitHub from the github block, which must be set; hc nil
// is http.DefaultClient.
func NewPlatform(cfg *config.Config, hc *http.Client) *Platform {
	return &Platform{cfg: cfg, hc: hc}
}

// Name is GitHub's origin, inbox source and readiness check.
func (p *Platform) Name() string { return Name }

// Hooks are none: files and approver groups are not read from GitHub.
func (p *Platform) Hooks() bridge.Hooks { return bridge.Hooks{} }

// Connect builds the bridge.
func (p *Platform) Connect(d bridge.Deps) error {
	b, err := New(p.cfg.GitHub, p.cfg.PublicURL, d.Engine, d.Store, p.hc, d.Clock, d.Log)
	if err != nil {
		return err
	}
	b.observe = d.ObserveDelivery
	p.Bridge, p.clock = b, d.Clock
	return nil
}

// Routes is the webhook.
func (p *Platform) Routes() []bridge.Route {
	return []bridge.Route{{Pattern: "POST /github/webhook", Handler: p.handler}}
}

// Ready does not gate readiness on GitHub: webhooks are recorded whatever
// GitHub's API says, and replies wait for it. Status shows the API.
func (p *Platform) Ready(context.Context) error { return nil }

// Status is GitHub's section of the console's status page: whether the
// token is accepted.
func (p *Platform) Status(ctx context.Context, _ func(context.Context) error) bridge.Section {
	sec := bridge.Section{Title: "GitHub conversations", State: "ok"}
	if p.Bridge == nil {
		sec.Rows = append(sec.Rows, bridge.ConnectionRow(ctx, nil, &sec))
		return sec
	}
	sec.Rows = append(sec.Rows, bridge.ConnectionRow(ctx, p.client.Ping, &sec))
	if sec.State == "down" {
		sec.State = "warn" // not gating: webhooks are still recorded
	}
	sec.Rows = append(sec.Rows, bridge.Row{Label: "App login", Value: "@" + p.cfg.GitHub.Login})
	return sec
}

// PostOutcome posts a schedule run's outcome as a comment on its
// post_to.github_issue.
func (p *Platform) PostOutcome(ctx context.Context, s config.ScheduleConfig, fireTime time.Time, status, outcome string) error {
	if s.PostTo.GitHubIssue == "" {
		return nil
	}
	t, err := ghc.Parse(s.PostTo.GitHubIssue)
	if err != nil {
		return err
	}
	body := bridge.OutcomeHeading(s.Name, fireTime, status) + "\n\n" + outcome
	for _, part := range ghc.Split(body) {
		if _, err := p.client.Comment(ctx, t, part); err != nil {
			return fmt.Errorf("post outcome of %s to %s: %w", s.Name, t, err)
		}
	}
	return nil
}

// SessionLink is the issue or pull request.
func (p *Platform) SessionLink(s engine.Session) string {
	t, err := ghc.Parse(s.ThreadKey)
	if err != nil {
		return ""
	}
	return t.URL()
}

// Warnings are none.
func (p *Platform) Warnings() []string { return nil }
