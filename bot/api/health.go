package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// ReadinessCheck is one condition /readyz asks about: the database is
// writable, Slack accepts the bot token, an MCP server is connected. The
// services register them (see Server.AddReadinessCheck); Check returns nil
// when ready, or an error that says why not, fit for an operator to read.
type ReadinessCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// readinessTimeout bounds each check, so one hanging dependency makes
// /readyz say so instead of making the probe time out.
const readinessTimeout = 3 * time.Second

// CheckResult is one check's answer in /readyz's body.
type CheckResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Readiness is /readyz's body.
type Readiness struct {
	Status string        `json:"status"` // "ready" or "not_ready"
	Checks []CheckResult `json:"checks"`
}

// AddReadinessCheck registers a check /readyz runs. Call it before serving.
func (a *Server) AddReadinessCheck(c ReadinessCheck) {
	a.checksMu.Lock()
	defer a.checksMu.Unlock()
	a.checks = append(a.checks, c)
}

// livez answers whether the process is up and serving; nothing else.
// /healthz is its older name.
func (a *Server) livez(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz runs every registered check at once and answers 503 unless all
// pass, or when the server is shutting down.
func (a *Server) readyz(w http.ResponseWriter, r *http.Request) {
	a.checksMu.Lock()
	checks := append([]ReadinessCheck(nil), a.checks...)
	a.checksMu.Unlock()
	res := Readiness{Status: "ready", Checks: make([]CheckResult, len(checks))}
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), readinessTimeout)
			defer cancel()
			res.Checks[i] = CheckResult{Name: c.Name, OK: true}
			if err := runCheck(ctx, c.Check); err != nil {
				res.Checks[i] = CheckResult{Name: c.Name, Error: err.Error()}
			}
		})
	}
	wg.Wait()
	status := http.StatusOK
	select {
	case <-a.done:
		res.Checks = append(res.Checks, CheckResult{Name: "shutdown", Error: "brain is shutting down"})
	default:
	}
	for _, c := range res.Checks {
		if !c.OK {
			res.Status, status = "not_ready", http.StatusServiceUnavailable
		}
	}
	writeJSON(w, status, res)
}

// runCheck runs one check, turning a check that outlives ctx into
// ctx's error instead of a hung probe.
func runCheck(ctx context.Context, check func(context.Context) error) error {
	errc := make(chan error, 1)
	go func() { errc <- check(ctx) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("no answer within %s", readinessTimeout)
		}
		return ctx.Err()
	}
}
