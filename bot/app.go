// Package bot is the application: from a loaded config.Config it wires the
// store, models, tools and engine together, and serves the HTTP API. It is
// the only package that knows every other one; cmd/brain only calls it (and
// bot/config to load the file).
package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"brain/bot/api"
	"brain/bot/audit"
	"brain/bot/config"
	"brain/bot/connect"
	"brain/bot/governance"
	"brain/bot/schedule"
	"brain/bot/telemetry"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/internal/keyguard"
	"brain/store"
	"brain/tools"
	"brain/tools/skills"
)

// Options are what an embedding program or a test injects.
type Options struct {
	// Logger overrides the logger built from the config's log section.
	Logger *slog.Logger
	// Stderr is where the built logger writes (default os.Stderr).
	Stderr io.Writer
	// Clock and NewID default to the wall clock and random ids.
	Clock func() time.Time
	NewID func(prefix string) string
	// Tools are Go-defined tools that agents may name in their tool lists.
	Tools []tools.Definition
	// SpanExporter, when set, receives every trace span as it ends,
	// whatever the telemetry config says (tests).
	SpanExporter sdktrace.SpanExporter
	// Platforms are conversation platforms besides those the config
	// turns on (see Platform).
	Platforms []Platform
	// Build names the binary in brain_build_info (cmd/brain's version).
	Build telemetry.Build
}

// Build names the running binary in brain_build_info.
type Build = telemetry.Build

// App is a running brain: store, engine and HTTP server.
type App struct {
	cfg    *config.Config
	log    *slog.Logger
	store  store.Store
	engine *engine.Engine
	api    *api.Server
	// keys checks API keys for the API and the console's key sign-in:
	// one throttle of wrong keys, one metric.
	keys  *keyguard.Guard
	lock  *os.File
	fakes []*fakemodel.Server
	// tracing is nil when traces are off.
	tracing *telemetry.Tracing
	// closers are closed after the services stop (sandboxes).
	closers []io.Closer
	// skills is the skill catalog (nil without skills.sources) and
	// skillUses which skills each agent uses.
	skills    *skills.Catalog
	skillUses map[string]agentSkills
	schedules *schedule.Scheduler
	// governance.go: the audit trail, its sealer, budgets, rate limits and
	// retention (each nil but audit when the config sets none).
	audit      *audit.Recorder
	sealer     *audit.Sealer
	budgets    *governance.Budgets
	rateLimits *governance.RateLimits
	retention  *governance.Retention
	eraser     *governance.Eraser
	// connect runs the OAuth connect flows (nil without auth: oauth servers).
	connect *connect.Service
	// platforms are the conversation platforms the config turns on.
	platforms []Platform
	// services are the long-lived services in start order: the MCP
	// catalog, the engine, the platform bridges, the scheduler.
	services []service
	// warnings are logged once the app started.
	warnings []string

	server   *http.Server
	listener net.Listener
	done     chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// New opens the database and builds everything; Start begins serving.
func New(ctx context.Context, cfg *config.Config, opts Options) (app *App, err error) {
	a := &App{cfg: cfg, done: make(chan struct{})}
	a.log = opts.Logger
	if a.log == nil {
		a.log = NewLogger(cfg, opts.Stderr)
	}
	defer func() {
		if err != nil {
			_ = a.tracing.Shutdown(context.Background())
			a.closeResources()
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data_dir %s: %w", cfg.DataDir, err)
	}
	if usesFileLock(cfg) {
		if a.lock, err = lockDataDir(cfg.DataDir); err != nil {
			return nil, err
		}
	}
	if a.store, err = openStore(ctx, cfg); err != nil {
		return nil, err
	}
	sealed, keyWarnings, err := sealStore(ctx, a.store, cfg, a.log)
	if err != nil {
		return nil, err
	}
	a.store = sealed
	a.warnings = append(a.warnings, keyWarnings...)
	models, err := a.buildModels()
	if err != nil {
		return nil, err
	}
	reg := telemetry.NewRegistry()
	reg.Include(telemetry.Standard(opts.Build))
	tel := telemetry.NewMetrics(reg, a.log)
	if a.tracing, err = telemetry.NewTracing(ctx, cfg, opts.SpanExporter); err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	var observer engine.Observer = tel
	if a.tracing != nil {
		observer = telemetry.Observers{tel, a.tracing}
	}
	for name, m := range models {
		mc := cfg.Models[name]
		if a.tracing != nil {
			m = a.tracing.TraceModel(mc.Provider, mc.Model, m)
		}
		models[name] = tel.ObserveModel(mc.Model, mc.Price, m)
	}
	clock, newID := opts.Clock, opts.NewID
	if clock == nil {
		clock = time.Now
	}
	if newID == nil {
		newID = NewID
	}
	a.connect = buildConnect(cfg, a.store, clock, newID, a.log)
	agents, mcps, err := a.buildAgentsAndTools(ctx, models, opts.Tools)
	if err != nil {
		return nil, err
	}
	if mcps != nil {
		mcps.registerMetrics(reg)
	}
	if a.platforms, err = newPlatforms(cfg, clock, opts.Platforms); err != nil {
		return nil, err
	}
	if err := a.buildGovernance(clock); err != nil {
		return nil, err
	}
	if err := withMemoryTools(cfg, agents, a.store, clock, recordMemoryChange(func() *engine.Engine { return a.engine })); err != nil {
		return nil, err
	}
	if err := a.buildEngine(agents, observer, clock, newID); err != nil {
		return nil, err
	}
	if a.retention != nil {
		a.retention.Owner = a.engine.ReplicaID()
		a.retention.Turns = func() int { return a.engine.Stats().RunningTurns }
		if fs := fileStoreOf(a.platforms); fs != nil {
			a.retention.Files = fs
		}
	}
	if a.schedules, err = schedule.New(cfg, a.engine, a.store, a.log, clock); err != nil {
		return nil, err
	}
	a.keys = api.NewKeyGuard(cfg.APIKeys, clock)
	a.api = api.New(api.Config{
		Engine:       a.engine,
		Schedules:    a.schedules,
		Logger:       a.log,
		APIKeys:      cfg.APIKeys,
		Keys:         a.keys,
		MaxBodyBytes: cfg.Limits.MaxBodyBytes,
		WriteTimeout: cfg.Limits.WriteTimeout.Std(),
		DefaultAgent: cfg.Agents[0].Name,
		Metrics:      reg,
		Done:         a.done,
		Prices:       agentPrices(cfg),
		Clock:        clock,
		Accounts:     a.store,
		Audit:        a.audit,
		Budgets:      a.budgetsAPI(),
		Memory:       a.store,
		Connector:    connectorOf(a.connect),
		Eraser:       a.eraser,
	})
	if err := a.connectPlatforms(clock, tel); err != nil {
		return nil, err
	}
	// The scheduler posts outcomes through the platforms: it starts after them.
	a.services = append(a.services, a.schedules)
	if a.retention != nil {
		a.services = append(a.services, a.retention)
	}
	if a.sealer != nil {
		// First to start, last to stop: its final seal covers what the
		// others recorded.
		a.services = append([]service{a.sealer}, a.services...)
	}
	a.registerReadiness(clock, mcps)
	a.mountConnect(mcps)
	if err := a.mountConsole(clock, mcps); err != nil {
		return nil, err
	}
	telemetry.RegisterInbox(reg, a.store, a.inboxSources(), clock, a.log)
	a.registerGovernanceMetrics(reg)
	a.server = newHTTPServer(cfg.Limits, a.api.Handler(), reservedRoutes(a.platforms), a.log)
	return a, nil
}

// buildAgentsAndTools builds the tools (declared, built in, extra and the
// MCP catalog, which becomes a service) and the agents over them.
func (a *App) buildAgentsAndTools(ctx context.Context, models map[string]engine.Model, extra []tools.Definition) ([]*engine.Agent, *mcpCatalog, error) {
	cfg := a.cfg
	declared, err := a.declaredTools()
	if err != nil {
		return nil, nil, err
	}
	binds, err := a.startSkills(ctx)
	if err != nil {
		return nil, nil, err
	}
	builtins, closers, err := builtinTools(cfg, true, binds, githubUsers{connect: a.connect, people: a.toolPeople()})
	a.closers = append(a.closers, closers...) // closed on error too
	if err != nil {
		return nil, nil, err
	}
	for i, d := range builtins {
		// GitHub tools acting as a person send them a connect link.
		builtins[i] = a.withConnectLinks(d)
	}
	declared = append(declared, builtins...)
	var mcps *mcpCatalog
	if len(cfg.MCPServers) > 0 {
		mcps = newMCPCatalog(a.cfg, a.log, a.mcpOAuth)
		mcps.wrap = a.withConnectLinks
		a.services = append(a.services, mcps)
		if a.tracing != nil {
			a.tracing.DescribeMCP(mcps.describe)
		}
	}
	defs := withPlanTool(append(declared, extra...))
	if err := checkAgentTools(cfg, defs); err != nil {
		return nil, nil, err
	}
	agents, err := buildAgents(cfg, models, defs, mcps)
	if err != nil {
		return nil, nil, err
	}
	attachSkills(cfg, agents, a.skills, a.skillUses)
	return agents, mcps, nil
}

// buildEngine builds the engine from the config, with the platforms'
// hooks, and the live feed of other replicas' commits with PostgreSQL.
func (a *App) buildEngine(agents []*engine.Agent, observer engine.Observer, clock func() time.Time, newID func(string) string) error {
	cfg := a.cfg
	policies, err := cfg.ApprovalPolicies()
	if err != nil {
		return err
	}
	files, fileBudget, groups := platformHooks(a.platforms)
	a.engine, err = engine.New(engine.Config{
		Store:              a.store,
		Agents:             agents,
		Logger:             a.log,
		Clock:              clock,
		NewID:              newID,
		MaxRunningTurns:    cfg.Limits.MaxRunningTurns,
		MaxQueuedTurns:     cfg.Limits.MaxQueuedTurns,
		MaxToolIterations:  cfg.Limits.MaxToolIterations,
		MaxOutputBytes:     cfg.Limits.MaxOutputBytes,
		ToolTimeout:        cfg.Limits.ToolTimeout.Std(),
		ElicitationTimeout: cfg.Limits.ElicitationTimeout.Std(),
		ApprovalTTL:        cfg.Approvals.TTL.Std(),
		Policies:           policies,
		RemindBefore:       cfg.Approvals.RemindBefore.Std(),
		Scrubber:           tools.NewScrubber(cfg.Secrets()...),
		Observer:           observer,
		Spend:              a.spend(),
		Pace:               a.pace(),
		Files:              files,
		FileBudget:         fileBudget,
		Groups:             groups,
		People:             peopleLinks{a.store},
		MaxParallelTools:   cfg.Limits.MaxParallelTools,
		Leases:             replicaLeases(a.store),
		Peers:              replicaPeers(a.store),
		LeaseTTL:           cfg.Storage.LeaseTTL.Std(),
		PollInterval:       cfg.Storage.PollInterval.Std(),
		OutageGrace:        cfg.Storage.OutageGrace.Std(),
	})
	if err != nil {
		return err
	}
	a.services = append(a.services, a.engine)
	if rs, ok := a.store.(store.Replicated); ok {
		// Commits of other replicas reach this one's hub before anything
		// that watches it starts.
		a.services = append(a.services, &liveFeed{store: rs, poll: cfg.Storage.PollInterval.Std(), log: a.log,
			feed: store.Feed{Changed: a.engine.Notify, StopTurn: a.engine.CancelLocalTurn}})
	}
	return nil
}

// Start starts the services in order (the MCP catalog, the engine, which
// recovers what a crash left running and schedules queued input, the
// platform bridges, the scheduler, which posts outcomes through them), then
// serves HTTP.
func (a *App) Start(ctx context.Context) error {
	for _, s := range a.services {
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", a.cfg.Listen, err)
	}
	a.listener = limitListener(ln, a.cfg.Limits.MaxConnections, a.cfg.Limits.MaxPendingPerClient)
	go func() {
		if err := a.server.Serve(a.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("http server stopped", tools.LogErr, err)
		}
	}()
	a.log.Info("brain listening", tools.LogAddr, ln.Addr().String(), tools.LogDataDir, a.cfg.DataDir,
		tools.LogStorage, a.cfg.Storage.Driver, tools.LogReplica, a.engine.ReplicaID())
	for _, section := range a.cfg.Unsupported() {
		a.log.Warn("config section is valid but this build does not run it yet; it is ignored", tools.LogKey, section)
	}
	for _, w := range a.warnings {
		a.log.Warn(w)
	}
	for _, use := range a.cfg.MissingEnvUses() {
		a.log.Warn("environment variable is not set; features that use it are off or will fail", tools.LogVar, use.Var, tools.LogKeys, strings.Join(use.Keys, ","))
	}
	return nil
}

// Shutdown stops taking requests, lets running turns finish until ctx is
// done (then marks them interrupted) and closes the database. Recorded input
// is never lost: what did not run yet runs after the next start.
//
// Services stop in reverse start order, with one step brought forward: once
// the scheduler (the last one to make new work) has stopped, the engine is
// drained, so the replies of turns that finish within the grace still reach
// their threads through the bridges, which are still running. Input
// arriving meanwhile waits in the bridges' inboxes (the engine answers it
// "overloaded") for the next start. The engine's own place in the order
// then finds it already stopped.
func (a *App) Shutdown(ctx context.Context) error {
	a.stopOnce.Do(func() {
		close(a.done) // ends event streams, so Shutdown need not wait for them
		var errs []error
		if a.listener != nil {
			if err := a.server.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("http shutdown: %w", err))
			}
		}
		drained := false
		for i := len(a.services) - 1; i >= 0; i-- {
			s := a.services[i]
			if !drained && s != service(a.schedules) {
				if err := a.engine.Stop(ctx); err != nil {
					errs = append(errs, fmt.Errorf("engine stop: %w", err))
				}
				drained = true
			}
			// Past the grace the engine cancels what runs and waits for
			// it; the others end as soon as they are cancelled, and are
			// waited for even past the grace so the store is not closed
			// under them.
			if err := s.Stop(context.WithoutCancel(ctx)); err != nil {
				errs = append(errs, err)
			}
		}
		a.flushTraces(ctx)
		errs = append(errs, a.closeResources())
		a.stopErr = errors.Join(errs...)
		a.log.Info("brain stopped")
	})
	return a.stopErr
}

// flushTraces exports the spans not yet sent within the grace, or, when
// the grace is spent (the turns it cut short end last), a few seconds
// more. A collector that is down does not fail Shutdown.
func (a *App) flushTraces(ctx context.Context) {
	if a.tracing == nil {
		return
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
	}
	if err := a.tracing.Shutdown(ctx); err != nil {
		a.log.Warn("flush traces", tools.LogErr, err)
	}
}

func (a *App) closeResources() error {
	var errs []error
	for _, c := range a.closers {
		errs = append(errs, c.Close())
	}
	for _, f := range a.fakes {
		f.Close()
	}
	if a.store != nil {
		errs = append(errs, a.store.Close())
	}
	if a.lock != nil {
		errs = append(errs, a.lock.Close()) // closing releases the flock
	}
	return errors.Join(errs...)
}

// Run starts the app and serves until ctx is cancelled, then shuts down
// within grace.
func Run(ctx context.Context, cfg *config.Config, opts Options, grace time.Duration) error {
	app, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	if err := app.Start(ctx); err != nil {
		_ = app.Shutdown(context.Background())
		return err
	}
	<-ctx.Done()
	app.log.Info("shutting down; running turns get a grace period", tools.LogGrace, grace.String())
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return app.Shutdown(sctx)
}

// NewLogger builds the logger the config asks for, redacting secrets.
func NewLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	if w == nil {
		w = os.Stderr
	}
	level := slog.LevelInfo
	_ = level.UnmarshalText([]byte(cfg.Log.Level))
	hopts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, hopts)
	if cfg.Log.Format == "json" {
		h = slog.NewJSONHandler(w, hopts)
	}
	return slog.New(tools.RedactHandler(h, tools.NewScrubber(cfg.Secrets()...)))
}

// service is a long-lived part of the app: Start begins its work, Stop
// (safe before Start and twice) ends it.
type service interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}
