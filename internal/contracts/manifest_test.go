package contracts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// manifestType is the manifest argument of apps.manifest.validate in
// @slack/web-api: Slack's own SDK's type of an app manifest, closed below
// the top level (scopes and events are enumerations).
const manifestType = `web.AppsManifestValidateArguments["manifest"]`

// manifestSDKLags are what the documented manifest uses and the pinned
// SDK's type does not know yet, each listed in docs/testing.md: Slack's
// agent features are newer than @slack/web-api 8.2.0's manifest type. A
// lag the SDK catches up on, or a new refusal, fails the test.
var manifestSDKLags = []string{"assistant:write", "agent_session_stopped", "code_channels:manage"}

// TestSlackManifest_MatchesTheSDKType: the app manifest the documentation
// tells users to paste, and the agent additions, type-check against the
// SDK's manifest type except for the listed lags; a misspelt setting is
// refused (the canary).
func TestSlackManifest_MatchesTheSDKType(t *testing.T) {
	Require(t)
	root, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Dir(filepath.Dir(root))
	var doc string
	for _, name := range []string{"docs/slack.md", "README.md"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err == nil && strings.Contains(string(data), "From an app manifest") {
			doc = string(data)
			break
		}
	}
	if doc == "" {
		t.Fatal("no page documents the app manifest (From an app manifest)")
	}
	yamlBlock := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	after := func(marker string) map[string]any {
		i := strings.Index(doc, marker)
		if i < 0 {
			t.Fatalf("%q not found", marker)
		}
		m := yamlBlock.FindStringSubmatch(doc[i:])
		if m == nil {
			t.Fatalf("no yaml block after %q", marker)
		}
		var v map[string]any
		if err := yaml.Unmarshal([]byte(dedent(m[1])), &v); err != nil {
			t.Fatalf("manifest after %q: %v", marker, err)
		}
		return v
	}
	manifest := after("From an app manifest")
	agent := after("Add to the manifest above")
	withAgent := merge(manifest, agent).(map[string]any)
	// Socket Mode drops both request URLs.
	socket := deepCopy(t, merge(manifest, map[string]any{"settings": map[string]any{"socket_mode_enabled": true}})).(map[string]any)
	delete(socket["settings"].(map[string]any)["event_subscriptions"].(map[string]any), "request_url")
	delete(socket["settings"].(map[string]any)["interactivity"].(map[string]any), "request_url")
	misspelt := merge(manifest, map[string]any{"settings": map[string]any{"socket_mode_enable": true}})

	var bodies []Body
	for _, v := range []any{manifest, withAgent, socket, misspelt} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, Body{Name: "manifest", Type: manifestType, JSON: data})
	}
	errs := TypeCheck(t, SlackImports, bodies)
	t.Logf("the type's refusals: %q", errs)
	for i, name := range []string{"the manifest", "with the agent additions", "in Socket Mode"} {
		rest := errs[i]
		for _, lag := range manifestSDKLags {
			rest = regexp.MustCompile(`TS\d+: [^(]*\(at "`+regexp.QuoteMeta(lag)+`"[^)]*\)`).ReplaceAllString(rest, "")
		}
		if strings.TrimSpace(rest) != "" {
			t.Errorf("%s: %s", name, errs[i])
		}
	}
	for _, lag := range manifestSDKLags {
		if !strings.Contains(errs[1], `"`+lag+`"`) {
			t.Errorf("the SDK's manifest type now takes %q: drop it from manifestSDKLags and docs/testing.md", lag)
		}
	}
	if !strings.Contains(errs[3], "socket_mode_enable") {
		t.Errorf("canary: a misspelt setting passed: %q", errs[3])
	}
}

func deepCopy(t *testing.T, v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func dedent(s string) string {
	lines := strings.Split(s, "\n")
	indent := -1
	for _, l := range lines {
		if t := strings.TrimLeft(l, " "); t != "" && (indent < 0 || len(l)-len(t) < indent) {
			indent = len(l) - len(t)
		}
	}
	for i, l := range lines {
		if len(l) >= indent {
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}

// merge lays b on a: maps merge, lists append, anything else is replaced.
func merge(a, b any) any {
	switch bv := b.(type) {
	case map[string]any:
		av, _ := a.(map[string]any)
		out := map[string]any{}
		for k, v := range av {
			out[k] = v
		}
		for k, v := range bv {
			out[k] = merge(av[k], v)
		}
		return out
	case []any:
		av, _ := a.([]any)
		return append(append([]any{}, av...), bv...)
	}
	return b
}
