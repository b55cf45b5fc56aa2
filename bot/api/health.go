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
//
// Only what this process needs to serve gates readiness (the database).
// An Integration (Slack, Linear, MCP, schedules) is reported on
// /readyz?verbose and as brain_integration_up, never gating: a load
// balancer must keep sending traffic to a brain whose Slack is down, or
// the console and the Linear install link that would fix it go dark.
type ReadinessCheck struct {
	Name        string
	Check       func(ctx context.Context) error
	Integration bool
}

// readinessTimeout bounds each check, so one hanging dependency makes
// /readyz say so instead of making the probe time out.
const readinessTimeout = 3 * time.Second

// CheckResult is one check's answer in /readyz's body.
type CheckResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Integration marks a check that is reported, not gating.
	Integration bool `json:"integration,omitempty"`
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

// readyz answers 503 when a gating check fails or the server is shutting
// down. With ?verbose it also runs the integrations' checks and lists
// them, without letting them gate.
func (a *Server) readyz(w http.ResponseWriter, r *http.Request) {
	_, verbose := r.URL.Query()["verbose"]
	res := Readiness{Status: "ready", Checks: a.runChecks(r.Context(), verbose)}
	status := http.StatusOK
	select {
	case <-a.done:
		res.Checks = append(res.Checks, CheckResult{Name: "shutdown", Error: "brain is shutting down"})
	default:
	}
	for _, c := range res.Checks {
		if !c.OK && !c.Integration {
			res.Status, status = "not_ready", http.StatusServiceUnavailable
		}
	}
	writeJSON(w, status, res)
}

// runChecks runs the gating checks, and the integrations' too when
// integrations is set, all at once.
func (a *Server) runChecks(ctx context.Context, integrations bool) []CheckResult {
	a.checksMu.Lock()
	var checks []ReadinessCheck
	for _, c := range a.checks {
		if integrations || !c.Integration {
			checks = append(checks, c)
		}
	}
	a.checksMu.Unlock()
	out := make([]CheckResult, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, readinessTimeout)
			defer cancel()
			out[i] = CheckResult{Name: c.Name, OK: true, Integration: c.Integration}
			if err := runCheck(ctx, c.Check); err != nil {
				out[i] = CheckResult{Name: c.Name, Error: err.Error(), Integration: c.Integration}
			}
		})
	}
	wg.Wait()
	return out
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
