package bot

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"brain/bot/api"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// pricedConfig is a config whose model has Claude Sonnet 4.5's published
// prices and a small context window.
func pricedConfig(t *testing.T, fake *fakemodel.Server) string {
	dir := t.TempDir()
	cfg := fmt.Sprintf(`listen: 127.0.0.1:0
data_dir: %s
models:
  default:
    provider: anthropic
    model: claude-test
    base_url: %s
    api_key: test-model-key
    max_retries: 0
    max_tokens: 1000
    context_window: 50000
    price: {input: 3, cache_read: 0.3, cache_write: 3.75, output: 15}
agents:
  - name: default
    instructions: You are a test agent.
`, filepath.Join(dir, "data"), fake.URL())
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// metricValue is the value of the series that matches re, 0 when none does.
func metricValue(t *testing.T, text, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestUsage_SessionUsageCostMetricsAndCompact(t *testing.T) {
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	ta := startTestApp(t, fake, pricedConfig(t, fake), Options{})
	s := ta.createSession()
	for i := 0; i < 3; i++ {
		fake.Push(fakemodel.Text(fmt.Sprintf("answer %d: %s", i, strings.Repeat("words ", 200))))
		ta.sendMessage(s.ID, fmt.Sprintf("question %d: %s", i, strings.Repeat("context ", 300)))
		ta.waitTurns(s.ID, i+1)
	}
	var got api.SessionWithUsage
	ta.must(http.StatusOK, "GET", "/v1/sessions/"+s.ID, nil, &got)
	u := got.Usage
	if u.InputTokens == 0 || u.OutputTokens == 0 || u.CacheReadTokens == 0 || u.CacheWriteTokens == 0 ||
		u.UncachedInputTokens != u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens {
		t.Fatalf("usage %+v: later turns should read the earlier ones from the cache", u)
	}
	want := (float64(u.UncachedInputTokens)*3 + float64(u.CacheReadTokens)*0.3 + float64(u.CacheWriteTokens)*3.75 + float64(u.OutputTokens)*15) / 1e6
	if u.CostUSD == nil || math.Abs(*u.CostUSD-want) > 1e-9 {
		t.Errorf("cost %v, want %v", u.CostUSD, want)
	}

	m := ta.metricsText()
	for kind, n := range map[string]int64{"input": u.InputTokens, "output": u.OutputTokens, "cache_read": u.CacheReadTokens, "cache_write": u.CacheWriteTokens} {
		if v := metricValue(t, m, `brain_model_tokens_total{model="claude-test",kind="`+kind+`"}`); int64(v) != n {
			t.Errorf("tokens metric %s = %v, want %d", kind, v, n)
		}
	}
	if v := metricValue(t, m, `brain_model_cost_usd_total{model="claude-test"}`); math.Abs(v-want) > 1e-6 {
		t.Errorf("cost metric %v, want %v", v, want)
	}

	fake.Push(fakemodel.Text("SUMMARY: three questions answered."))
	var c engine.ContextCompacted
	ta.must(http.StatusOK, "POST", "/v1/sessions/"+s.ID+"/compact", nil, &c)
	if c.Reason != engine.CompactAPI || !strings.HasPrefix(c.Summary, "SUMMARY") || c.TokensAfter >= c.TokensBefore {
		t.Errorf("compaction %+v", c)
	}
	if v := metricValue(t, ta.metricsText(), `brain_context_compactions_total{reason="requested"}`); v != 1 {
		t.Errorf("compactions metric %v, want 1", v)
	}
	evs := ta.events(s.ID)
	if countType(evs, engine.EventContextCompacted) != 1 {
		t.Errorf("%d context.compacted events", countType(evs, engine.EventContextCompacted))
	}
	var after api.SessionWithUsage
	ta.must(http.StatusOK, "GET", "/v1/sessions/"+s.ID, nil, &after)
	if after.Usage.InputTokens <= u.InputTokens {
		t.Errorf("the compaction's model call is not in the usage: %+v then %+v", u, after.Usage)
	}
	status, _, body := ta.do("POST", "/v1/sessions/nope/compact", nil)
	if status != http.StatusNotFound {
		t.Errorf("compact of an unknown session: %d %s", status, body)
	}
}
