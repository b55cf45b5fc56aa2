package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"brain/bot/api"
	"brain/channels/linear/linearfake"
)

// readiness asks /readyz (path: "/readyz" or "/readyz?verbose") and
// returns the status and the checks by name.
func (ta *testApp) readinessAt(path string) (int, map[string]api.CheckResult) {
	ta.t.Helper()
	status, _, body := ta.do("GET", path, nil)
	var r api.Readiness
	if err := json.Unmarshal(body, &r); err != nil {
		ta.t.Fatalf("readyz %d %s: %v", status, body, err)
	}
	byName := map[string]api.CheckResult{}
	for _, c := range r.Checks {
		byName[c.Name] = c
	}
	if (status == http.StatusOK) != (r.Status == "ready") {
		ta.t.Fatalf("readyz status %d with body status %q", status, r.Status)
	}
	return status, byName
}

// readiness is /readyz?verbose: every check, integrations included.
func (ta *testApp) readiness() (int, map[string]api.CheckResult) {
	ta.t.Helper()
	return ta.readinessAt("/readyz?verbose")
}

// integrationUp reads brain_integration_up{name=...} from /metrics.
func (ta *testApp) integrationUp(name string) string {
	ta.t.Helper()
	_, _, body := ta.do("GET", "/metrics", nil)
	prefix := `brain_integration_up{name="` + name + `"} `
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return v
		}
	}
	ta.t.Fatalf("metrics lack %s", prefix)
	return ""
}

func TestReadyz_DatabaseGatesSchedulesAreReported(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	status, checks := ta.readinessAt("/readyz")
	if status != http.StatusOK || len(checks) != 1 || !checks["database"].OK {
		t.Fatalf("readyz %d %+v", status, checks)
	}
	status, checks = ta.readiness()
	if status != http.StatusOK || len(checks) != 2 || !checks["database"].OK || !checks["schedules"].OK || !checks["schedules"].Integration {
		t.Fatalf("readyz?verbose %d %+v", status, checks)
	}
	// Stopped schedules are reported by name, and do not gate.
	if err := ta.app.Schedules().Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	status, checks = ta.readiness()
	if status != http.StatusOK || checks["schedules"].OK || !strings.Contains(checks["schedules"].Error, "stopped") {
		t.Fatalf("after stopping schedules: %d %+v", status, checks)
	}
	if v := ta.integrationUp("schedules"); v != "0" {
		t.Fatalf("brain_integration_up{schedules} = %s", v)
	}
}

func TestReadyz_SlackAuthFailingDoesNotGate(t *testing.T) {
	sa := newSlackApp(t)
	sa.slack.Fail("auth.test", 1, "invalid_auth")
	before := len(sa.slack.Calls("auth.test"))
	if status, checks := sa.readinessAt("/readyz"); status != http.StatusOK || len(checks) != 1 {
		t.Fatalf("plain probe with Slack down: %d %+v", status, checks)
	}
	if len(sa.slack.Calls("auth.test")) != before {
		t.Fatal("the plain probe asked Slack")
	}
	status, checks := sa.readiness()
	if status != http.StatusOK || checks["slack"].OK || !checks["slack"].Integration || !strings.Contains(checks["slack"].Error, "invalid_auth") {
		t.Fatalf("token refused: %d %+v", status, checks)
	}
	if status, checks = sa.readiness(); status != http.StatusOK || !checks["slack"].OK {
		t.Fatalf("token accepted again: %d %+v", status, checks)
	}
	if v := sa.integrationUp("slack"); v != "1" {
		t.Fatalf("brain_integration_up{slack} = %s", v)
	}
	// A success is trusted for a while, then asked again.
	calls := len(sa.slack.Calls("auth.test"))
	sa.slack.Fail("auth.test", 1, "token_revoked")
	if _, checks = sa.readiness(); !checks["slack"].OK || len(sa.slack.Calls("auth.test")) != calls {
		t.Fatalf("cached success asked Slack again: %+v", checks)
	}
	sa.clock.Advance(remoteReadyTTL + time.Second)
	if status, checks = sa.readiness(); status != http.StatusOK || !strings.Contains(checks["slack"].Error, "token_revoked") {
		t.Fatalf("after the cache expired: %d %+v", status, checks)
	}
}

func TestReadyz_LinearTokenFailingDoesNotGate(t *testing.T) {
	la := newLinearApp(t)
	la.linear.FailViewer(1, linearfake.Fault{Status: http.StatusUnauthorized, Code: "AUTHENTICATION_ERROR", Message: "Authentication required, not authenticated"})
	status, checks := la.readiness()
	if status != http.StatusOK || checks["linear"].OK || !strings.Contains(checks["linear"].Error, "Authentication required") {
		t.Fatalf("token refused: %d %+v", status, checks)
	}
	if status, checks = la.readiness(); status != http.StatusOK || !checks["linear"].OK {
		t.Fatalf("token accepted again: %d %+v", status, checks)
	}
}

func TestReadyz_LinearNotInstalledIsReadyAndSaysWhere(t *testing.T) {
	oa := newOAuthApp(t)
	if status, _ := oa.readinessAt("/readyz"); status != http.StatusOK {
		t.Fatalf("readyz with Linear not installed: %d", status)
	}
	status, checks := oa.readiness()
	if status != http.StatusOK || checks["linear"].OK || !strings.Contains(checks["linear"].Error, "install it at") {
		t.Fatalf("readyz?verbose with Linear not installed: %d %+v", status, checks)
	}
	if v := oa.integrationUp("linear"); v != "0" {
		t.Fatalf("brain_integration_up{linear} = %s", v)
	}
}

func TestReadyz_MCPServerDownThenUp(t *testing.T) {
	srv := server.NewMCPServer("tracker", "1.0.0", server.WithToolCapabilities(true))
	streamable := server.NewStreamableHTTPServer(srv)
	var up atomic.Bool
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		streamable.ServeHTTP(w, r)
	}))
	t.Cleanup(peer.Close)
	ta := newTestApp(t, fmt.Sprintf("    tools: [tracker]\nmcp_servers:\n  - id: tracker\n    url: %s/mcp\n", peer.URL), Options{})
	status, checks := ta.readiness()
	if status != http.StatusOK || checks["mcp"].OK || !strings.Contains(checks["mcp"].Error, "tracker") {
		t.Fatalf("server down: %d %+v", status, checks)
	}
	up.Store(true)
	// The catalog reconnects in the background; readiness follows it.
	deadline := time.Now().Add(20 * time.Second) // past mcp's reconnect gap
	for {
		if _, checks = ta.readiness(); checks["mcp"].OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server up, still not ready: %d %+v", status, checks)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
