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
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"brain/bot/api"
	"brain/bot/config"
	"brain/bot/schedule"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/store/sqlite"
	"brain/tools"
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
}

// App is a running brain: store, engine and HTTP server.
type App struct {
	cfg    *config.Config
	log    *slog.Logger
	store  *sqlite.Store
	engine *engine.Engine
	api    *api.Server
	lock   *os.File
	fakes  []*fakemodel.Server
	// closers are closed after the engine stops (sandboxes, MCP clients).
	closers []io.Closer

	schedules *schedule.Scheduler
	slack     *slackBridge
	linear    *linearBridge

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
			a.closeResources()
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data_dir %s: %w", cfg.DataDir, err)
	}
	if a.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return nil, err
	}
	dbPath := filepath.Join(cfg.DataDir, "brain.db")
	a.store, err = sqlite.OpenWithOptions(ctx, dbPath, sqlite.Options{Synchronous: cfg.Storage.Synchronous})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", dbPath, err)
	}
	models, err := a.buildModels()
	if err != nil {
		return nil, err
	}
	declared, err := httpTools(cfg)
	if err != nil {
		return nil, err
	}
	builtins, closers, err := builtinTools(cfg)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, closers...)
	declared = append(declared, builtins...)
	var mcps *mcpCatalog
	if len(cfg.MCPServers) > 0 {
		mcps = newMCPCatalog(ctx, cfg, a.log)
		a.closers = append(a.closers, mcps)
	}
	agents, err := buildAgents(cfg, models, append(declared, opts.Tools...), mcps)
	if err != nil {
		return nil, err
	}
	clock, newID := opts.Clock, opts.NewID
	if clock == nil {
		clock = time.Now
	}
	if newID == nil {
		newID = NewID
	}
	a.engine, err = engine.New(engine.Config{
		Store:             a.store,
		Agents:            agents,
		Logger:            a.log,
		Clock:             clock,
		NewID:             newID,
		MaxRunningTurns:   cfg.Limits.MaxRunningTurns,
		MaxQueuedTurns:    cfg.Limits.MaxQueuedTurns,
		MaxToolIterations: cfg.Limits.MaxToolIterations,
		MaxOutputBytes:    cfg.Limits.MaxOutputBytes,
		ToolTimeout:       cfg.Limits.ToolTimeout.Std(),
		ApprovalTTL:       cfg.Approvals.TTL.Std(),
		Scrubber:          tools.NewScrubber(cfg.Secrets()...),
	})
	if err != nil {
		return nil, err
	}
	if a.schedules, err = schedule.New(cfg, a.engine, a.store, a.log, clock); err != nil {
		return nil, err
	}
	a.api = api.New(api.Config{
		Engine:       a.engine,
		Schedules:    apiScheduler{a.schedules},
		Logger:       a.log,
		APIKeys:      cfg.APIKeys,
		MaxBodyBytes: cfg.Limits.MaxBodyBytes,
		DefaultAgent: cfg.Agents[0].Name,
		Done:         a.done,
	})
	root := http.NewServeMux()
	root.Handle("/", a.api.Handler())
	if cfg.Slack != nil {
		a.slack = newSlackBridge(cfg.Slack, a.engine, a.store, clock, a.log)
		a.schedules.SetOutcomePoster(a.slack)
		root.Handle("/slack/", a.slack.HTTP())
	}
	if cfg.Linear != nil {
		a.linear = newLinearBridge(cfg.Linear, a.engine, a.store, clock, a.log)
		root.Handle("POST /linear/webhook", a.linear.HTTP())
	}
	var handler http.Handler = root
	a.server = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	return a, nil
}

// Engine is the app's engine, for embedding and tests.
func (a *App) Engine() *engine.Engine { return a.engine }

// Schedules is the app's scheduler.
func (a *App) Schedules() *schedule.Scheduler { return a.schedules }

// SetOutcomePoster sets what posts schedule outcomes to post_to targets
// (the Slack integration). Call it between New and Start.
func (a *App) SetOutcomePoster(p schedule.OutcomePoster) { a.schedules.SetOutcomePoster(p) }

// Addr is the address the API listens on, once started.
func (a *App) Addr() string {
	if a.listener == nil {
		return ""
	}
	return a.listener.Addr().String()
}

// Start recovers interrupted sessions, resumes queued input and starts
// serving the API.
func (a *App) Start(ctx context.Context) error {
	if err := a.engine.Start(ctx); err != nil {
		return err
	}
	if err := a.schedules.Start(ctx); err != nil {
		return err
	}
	if a.slack != nil {
		a.slack.Start(ctx)
	}
	if a.linear != nil {
		a.linear.Start()
	}
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", a.cfg.Listen, err)
	}
	a.listener = ln
	go func() {
		if err := a.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("http server stopped", logErr, err)
		}
	}()
	a.log.Info("brain listening", logAddr, ln.Addr().String(), "data_dir", a.cfg.DataDir)
	for _, section := range a.cfg.Unsupported() {
		a.log.Warn("config section is valid but this build does not run it yet; it is ignored", "key", section)
	}
	for _, name := range a.cfg.MissingEnv() {
		a.log.Warn("environment variable is not set; features that use it are off or will fail", "var", name)
	}
	return nil
}

// Shutdown stops taking requests, lets running turns finish until ctx is
// done (then marks them interrupted) and closes the database. Recorded input
// is never lost: what did not run yet runs after the next start.
func (a *App) Shutdown(ctx context.Context) error {
	a.stopOnce.Do(func() {
		close(a.done) // ends event streams, so Shutdown need not wait for them
		var errs []error
		if a.listener != nil {
			if err := a.server.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("http shutdown: %w", err))
			}
		}
		if a.schedules != nil {
			// Runs stay recorded; the next start watches them again.
			if err := a.schedules.Stop(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		if err := a.engine.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("engine stop: %w", err))
		}
		if a.slack != nil {
			a.slack.Stop() // undelivered events are delivered after the next start
		}
		if a.linear != nil {
			a.linear.Stop()
		}
		errs = append(errs, a.closeResources())
		a.stopErr = errors.Join(errs...)
		a.log.Info("brain stopped")
	})
	return a.stopErr
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
	app.log.Info("shutting down; running turns get a grace period", "grace", grace.String())
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return app.Shutdown(sctx)
}

// lockDataDir takes an exclusive lock so two brain processes never run
// engines over one database (each would think the other's turns crashed).
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "brain.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data_dir %s is in use by another brain process (brain serve or brain chat); stop it or use another data_dir", dir)
	}
	return f, nil
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
