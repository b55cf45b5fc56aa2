package bot

import (
	"context"
	"encoding/json"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"brain/engine/model/fakemodel"
	"brain/tools"
)

func lookupTool() tools.Definition {
	return tools.Definition{
		Name: "lookup", Description: "Look something up",
		Input: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
			return json.RawMessage(`{"found":true}`), nil
		},
	}
}

// metricsText scrapes /metrics.
func (ta *testApp) metricsText() string {
	ta.t.Helper()
	status, _, body := ta.do("GET", "/metrics", nil)
	if status != 200 {
		ta.t.Fatalf("metrics %d: %s", status, body)
	}
	return string(body)
}

// waitLog waits until the log has a line matching re.
func (ta *testApp) waitLog(re *regexp.Regexp) string {
	ta.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if m := re.FindString(ta.logs.String()); m != "" {
			return m
		}
		if time.Now().After(deadline) {
			ta.t.Fatalf("no log line matching %s:\n%s", re, ta.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTelemetry_TurnModelAndToolMetricsAndLogLines(t *testing.T) {
	ta := newTestApp(t, "    tools: [lookup]\n", Options{Tools: []tools.Definition{lookupTool()}})
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "lookup", Input: `{}`}, fakemodel.Call{Name: "invented", Input: `{}`}),
		fakemodel.Text("Found it."),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "look it up")
	ta.waitTurns(s.ID, 1)
	ended := ta.waitLog(regexp.MustCompile(`msg="turn ended"[^\n]*`))

	body := ta.metricsText()
	for _, want := range []string{
		"# HELP brain_turns_total ",
		"# TYPE brain_turns_total counter\n",
		`brain_turns_total{outcome="completed"} 1`,
		"# TYPE brain_turn_duration_seconds histogram\n",
		`brain_turn_duration_seconds_count{outcome="completed"} 1`,
		`brain_turn_duration_seconds_bucket{outcome="completed",le="+Inf"} 1`,
		`brain_model_call_duration_seconds_count{model="claude-test",outcome="ok"} 2`,
		`brain_model_tokens_total{model="claude-test",kind="input"} `,
		`brain_model_tokens_total{model="claude-test",kind="output"} `,
		`brain_tool_call_duration_seconds_count{tool="lookup",outcome="ok"} 1`,
		`brain_tool_call_duration_seconds_count{tool="(not offered)",outcome="error"} 1`,
		"# TYPE brain_delivery_duration_seconds histogram\n",
		"# TYPE brain_inbox_depth gauge\n",
		"# TYPE brain_inbox_oldest_age_seconds gauge\n",
		"# TYPE brain_audit_head_seq gauge\n",
		`brain_http_requests_total{code="201"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(body, `tool="invented"`) {
		t.Error("a tool name the model invented became a label value")
	}
	if t.Failed() {
		t.Log(body)
	}

	started := ta.waitLog(regexp.MustCompile(`msg="turn started"[^\n]*`))
	for _, want := range []string{"session_id=" + s.ID, "origin=api", "agent=default", "inputs=1"} {
		if !strings.Contains(started, want) {
			t.Errorf("turn started line lacks %s: %s", want, started)
		}
	}
	for _, want := range []string{"session_id=" + s.ID, "origin=api", "outcome=completed", "duration=", "input_tokens=", "output_tokens=", "rounds=1"} {
		if !strings.Contains(ended, want) {
			t.Errorf("turn ended line lacks %s: %s", want, ended)
		}
	}
	toolLine := ta.waitLog(regexp.MustCompile(`level=WARN msg="tool call failed"[^\n]*`))
	for _, want := range []string{"session_id=" + s.ID, "tool=invented", "reason="} {
		if !strings.Contains(toolLine, want) {
			t.Errorf("tool error line lacks %s: %s", want, toolLine)
		}
	}
	if !regexp.MustCompile(`level=DEBUG msg=request method=POST path=/v1/sessions status=201 duration=\S+ request_id=[0-9a-f]{32}`).MatchString(ta.logs.String()) {
		t.Error("no debug line for the request")
	}
}

func TestTelemetry_FailedTurnIsAWarningWithItsCode(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	ta.fake.Push(fakemodel.Fail(401, "invalid x-api-key"))
	s := ta.createSession()
	ta.sendMessage(s.ID, "hello")
	line := ta.waitLog(regexp.MustCompile(`level=WARN msg="turn failed"[^\n]*`))
	for _, want := range []string{"session_id=" + s.ID, "outcome=failed", "code="} {
		if !strings.Contains(line, want) {
			t.Errorf("turn failed line lacks %s: %s", want, line)
		}
	}
	ta.waitLog(regexp.MustCompile(`msg="turn failed"`))
	body := ta.metricsText()
	for _, want := range []string{`brain_turns_total{outcome="failed"} 1`, `brain_model_call_duration_seconds_count{model="claude-test",outcome="error"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q\n%s", want, body)
		}
	}
}

func TestTelemetry_InboxAndDeliveryMetricsWithSlack(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(fakemodel.Text("Hi there."))
	sa.message("Ev1", "app_mention", "U1", "<@UBOT> hello", "")
	sa.waitLog(regexp.MustCompile(`msg="turn ended"`))
	deadline := time.Now().Add(5 * time.Second)
	for {
		body := sa.metricsText()
		if strings.Contains(body, `brain_delivery_duration_seconds_count{platform="slack",outcome="ok"}`) &&
			strings.Contains(body, `brain_inbox_depth{source="slack"} 0`) &&
			strings.Contains(body, `brain_inbox_oldest_age_seconds{source="slack"} 0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery and inbox metrics missing:\n%s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMetrics_PromlintCleanWithRuntimeProcessAndBuildInfo scrapes a brain
// that has run a turn and lints the page with the linter `promtool check
// metrics` runs; the Go runtime, process and build_info families are
// there beside brain's own.
func TestMetrics_PromlintCleanWithRuntimeProcessAndBuildInfo(t *testing.T) {
	ta := newTestApp(t, "", Options{Build: Build{Version: "v9.9.9", Commit: "abc1234"}})
	s := ta.createSession()
	ta.sendMessage(s.ID, "hello")
	ta.waitTurns(s.ID, 1)
	body := ta.metricsText()
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("the metrics page does not parse: %v\n%s", err, body)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	for _, want := range []string{
		"# TYPE go_goroutines gauge\n",
		"# TYPE go_gc_duration_seconds summary\n",
		"# TYPE process_resident_memory_bytes gauge\n",
		`brain_build_info{commit="abc1234",goversion="` + runtime.Version() + `",version="v9.9.9"} 1` + "\n",
		"brain_turns_started_total 1\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}
