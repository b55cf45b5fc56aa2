package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"brain/bot/bridge"
	"brain/bot/config"
	"brain/bot/githubbridge"
	"brain/bot/linearbridge"
	"brain/bot/schedule"
	"brain/bot/slackbridge"
	"brain/bot/telemetry"
	ghc "brain/channels/github"
	"brain/engine"
	ghtools "brain/tools/github"
)

// Platform is a conversation platform (Slack, Linear): where people talk
// to brain's sessions. It is built from its config block before the engine,
// to which it gives its Hooks, then connected to the engine and the store;
// from then on it is a service that serves its Routes, says whether it is
// Ready, shows its section of the console's status page, posts schedule
// outcomes to the post_to targets it serves and links to its sessions.
//
// This file is the only one in bot that names the platforms: adding one is
// an entry in newPlatforms (docs/extending.md has the checklist).
type Platform interface {
	// Name is the platform's session origin, inbox source and readiness
	// check ("slack").
	Name() string
	// Hooks are what the engine gets from the platform; asked before
	// Connect.
	Hooks() bridge.Hooks
	// Connect builds what runs, on the engine and the store.
	Connect(d bridge.Deps) error
	// The rest are asked after Connect.
	service
	Routes() []bridge.Route
	Ready(ctx context.Context) error
	// Status is the platform's section of the console's status page;
	// connection is its readiness check, successes cached.
	Status(ctx context.Context, connection func(context.Context) error) bridge.Section
	// PostOutcome posts a schedule run's outcome to the post_to target of
	// this platform, and does nothing for a schedule without one.
	PostOutcome(ctx context.Context, s config.ScheduleConfig, fireTime time.Time, status, outcome string) error
	// SessionLink opens a session of the platform there ("" none).
	SessionLink(s engine.Session) string
	// Warnings are logged once the app started.
	Warnings() []string
}

var (
	_ Platform = (*slackbridge.Platform)(nil)
	_ Platform = (*linearbridge.Platform)(nil)
	_ Platform = (*githubbridge.Platform)(nil)

	// Slack sends connect links only the person sees; Linear and GitHub,
	// whose threads others read, link the console's connections page.
	_ connectLinker = (*slackbridge.Platform)(nil)
	_ publicLinker  = (*linearbridge.Platform)(nil)
	_ publicLinker  = (*githubbridge.Platform)(nil)
)

// newPlatforms is the one list of conversation platforms: those the config
// turns on, in start order, then extra (Options.Platforms).
func newPlatforms(cfg *config.Config, clock func() time.Time, extra []Platform) ([]Platform, error) {
	var out []Platform
	if cfg.Slack != nil {
		p, err := slackbridge.NewPlatform(cfg, clock)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if cfg.Linear != nil {
		out = append(out, linearbridge.NewPlatform(cfg))
	}
	if cfg.GitHub != nil {
		hc, err := githubAppClient(cfg.GitHub, clock)
		if err != nil {
			return nil, err
		}
		out = append(out, githubbridge.NewPlatform(cfg, hc))
	}
	out = append(out, extra...)
	seen := map[string]bool{}
	for _, p := range out {
		if seen[p.Name()] {
			return nil, fmt.Errorf("two platforms are named %q", p.Name())
		}
		seen[p.Name()] = true
	}
	return out, nil
}

// LinearStatus writes the Linear workspaces that installed the app (brain
// linear status); see linearbridge.WriteStatus.
func (i *Inspector) LinearStatus(ctx context.Context, cfg *config.Config, now time.Time, w io.Writer) error {
	return linearbridge.WriteStatus(ctx, cfg, i.store, now, w)
}

// platformHooks merges the platforms' hooks into the engine's: files by
// source, groups by kind, the largest file budget. Each is nil when no
// platform has one, as the engine expects then.
func platformHooks(ps []Platform) (files engine.Files, budget int64, groups engine.Groups) {
	fs, gs := filesBySource{}, groupsByKind{}
	for _, p := range ps {
		h := p.Hooks()
		for k, f := range h.Files {
			fs[k] = f
		}
		for k, g := range h.Groups {
			gs[k] = g
		}
		budget = max(budget, h.FileBudget)
	}
	if len(fs) > 0 {
		files = fs
	}
	if len(gs) > 0 {
		groups = gs
	}
	return files, budget, groups
}

// filesBySource loads a file through the platform it was shared on.
type filesBySource map[string]engine.Files

func (m filesBySource) Load(ctx context.Context, ref engine.FileRef) (engine.Attachment, error) {
	f, ok := m[ref.Source]
	if !ok {
		return engine.Attachment{}, fmt.Errorf("file %s: no platform loads files of %q", ref.Hash, ref.Source)
	}
	return f.Load(ctx, ref)
}

// groupsByKind resolves a group entry ("subteam:S0123") through the
// platform of its kind.
type groupsByKind map[string]engine.Groups

func (m groupsByKind) Members(ctx context.Context, entry string) ([]string, error) {
	kind, _, _ := strings.Cut(entry, ":")
	g, ok := m[kind]
	if !ok {
		return nil, fmt.Errorf("approvers entry %q: no platform has groups of kind %q", entry, kind)
	}
	return g.Members(ctx, entry)
}

// outcomePosters posts a schedule outcome through every platform; each
// ignores the post_to targets it does not serve.
type outcomePosters []Platform

var _ schedule.OutcomePoster = outcomePosters{}

func (ps outcomePosters) PostScheduleOutcome(ctx context.Context, s config.ScheduleConfig, run schedule.Run, outcome string) error {
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.PostOutcome(ctx, s, run.FireTime, run.Status, outcome))
	}
	return errors.Join(errs...)
}

// connectPlatforms connects each platform to the engine and the store,
// mounts its routes on the API (so their failures get its request ids and
// error envelope) and makes it a service, started after the engine.
func (a *App) connectPlatforms(clock func() time.Time, tel *telemetry.Metrics) error {
	for _, p := range a.platforms {
		d := bridge.Deps{Engine: a.engine, Store: a.store, Clock: clock, Log: a.log, ObserveDelivery: tel.ObserveDelivery(p.Name())}
		if err := p.Connect(d); err != nil {
			return err
		}
		for _, r := range p.Routes() {
			a.api.Mount(r.Pattern, r.Handler)
		}
		a.services = append(a.services, p)
		a.warnings = append(a.warnings, p.Warnings()...)
	}
	if len(a.platforms) > 0 {
		a.schedules.SetOutcomePoster(outcomePosters(a.platforms))
	}
	return nil
}

// inboxSources are the platforms' inbox sources, for the backlog metrics.
func (a *App) inboxSources() []string {
	var out []string
	for _, p := range a.platforms {
		out = append(out, p.Name())
	}
	return out
}

// githubAppClient is the HTTP client GitHub conversations comment with:
// with github.app, one that authenticates as the App's installation
// (installation tokens minted and refreshed as the github_* tools' are);
// nil, the default client, with github.token.
func githubAppClient(cfg *config.GitHubChatConfig, now func() time.Time) (*http.Client, error) {
	if cfg.App == nil {
		return nil, nil
	}
	key, err := os.ReadFile(cfg.App.PrivateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("github.app.private_key_file: %w", err)
	}
	rt, err := ghtools.AppTransport(ghtools.App{AppID: cfg.App.AppID, InstallationID: cfg.App.InstallationID, PrivateKey: key},
		cfg.BaseURL, nil, now)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt}, nil
}

// githubLogin is the GitHub login a user access token belongs to (GET
// /user), for checking whose account a connect link connected.
func githubLogin(ctx context.Context, baseURL, token string) (string, error) {
	c, err := ghc.New(baseURL, token, &http.Client{Timeout: 15 * time.Second}, nil)
	if err != nil {
		return "", err
	}
	return c.Login(ctx)
}
