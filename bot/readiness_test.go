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

// readiness asks /readyz and returns the status and the checks by name.
func (ta *testApp) readiness() (int, map[string]api.CheckResult) {
	ta.t.Helper()
	status, _, body := ta.do("GET", "/readyz", nil)
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

func TestReadyz_DatabaseAndSchedulesWithNothingElseConfigured(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	status, checks := ta.readiness()
	if status != http.StatusOK || len(checks) != 2 || !checks["database"].OK || !checks["schedules"].OK {
		t.Fatalf("readyz %d %+v", status, checks)
	}
	// Stopped schedules are not ready (and the API says so by name).
	if err := ta.app.Schedules().Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	status, checks = ta.readiness()
	if status != http.StatusServiceUnavailable || checks["schedules"].OK || !strings.Contains(checks["schedules"].Error, "stopped") {
		t.Fatalf("after stopping schedules: %d %+v", status, checks)
	}
}

func TestReadyz_SlackAuthFailsAndRecovers(t *testing.T) {
	sa := newSlackApp(t)
	sa.slack.Fail("auth.test", 1, "invalid_auth")
	status, checks := sa.readiness()
	if status != http.StatusServiceUnavailable || checks["slack"].OK || !strings.Contains(checks["slack"].Error, "invalid_auth") {
		t.Fatalf("token refused: %d %+v", status, checks)
	}
	if status, checks = sa.readiness(); status != http.StatusOK || !checks["slack"].OK {
		t.Fatalf("token accepted again: %d %+v", status, checks)
	}
	// A success is trusted for a while, then asked again.
	calls := len(sa.slack.Calls("auth.test"))
	sa.slack.Fail("auth.test", 1, "token_revoked")
	if status, _ = sa.readiness(); status != http.StatusOK || len(sa.slack.Calls("auth.test")) != calls {
		t.Fatalf("cached success asked Slack again (status %d)", status)
	}
	sa.clock.Advance(remoteReadyTTL + time.Second)
	if status, checks = sa.readiness(); status != http.StatusServiceUnavailable || !strings.Contains(checks["slack"].Error, "token_revoked") {
		t.Fatalf("after the cache expired: %d %+v", status, checks)
	}
}

func TestReadyz_LinearTokenFailsAndRecovers(t *testing.T) {
	la := newLinearApp(t)
	la.linear.FailViewer(1, linearfake.Fault{Status: http.StatusUnauthorized, Code: "AUTHENTICATION_ERROR", Message: "Authentication required, not authenticated"})
	status, checks := la.readiness()
	if status != http.StatusServiceUnavailable || checks["linear"].OK || !strings.Contains(checks["linear"].Error, "Authentication required") {
		t.Fatalf("token refused: %d %+v", status, checks)
	}
	if status, checks = la.readiness(); status != http.StatusOK || !checks["linear"].OK {
		t.Fatalf("token accepted again: %d %+v", status, checks)
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
	if status != http.StatusServiceUnavailable || checks["mcp"].OK || !strings.Contains(checks["mcp"].Error, "tracker") {
		t.Fatalf("server down: %d %+v", status, checks)
	}
	up.Store(true)
	// The catalog reconnects in the background; readiness follows it.
	deadline := time.Now().Add(20 * time.Second) // past mcp's reconnect gap
	for {
		if status, checks = ta.readiness(); status == http.StatusOK && checks["mcp"].OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server up, still not ready: %d %+v", status, checks)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
