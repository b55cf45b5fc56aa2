package bot

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// nginxLocation is one location block of the documented nginx example.
type nginxLocation struct {
	exact   bool   // location = /path
	path    string // the prefix, or the exact path
	proxied bool   // it has proxy_pass (else it answers itself)
}

var nginxLocationRE = regexp.MustCompile(`(?m)^\s*location\s+(=\s+)?(\S+)\s*\{([^}]*)\}`)

// nginxExample returns the locations of the first nginx block of
// docs/deployment.md.
func nginxExample(t *testing.T) []nginxLocation {
	t.Helper()
	raw, err := os.ReadFile("../docs/deployment.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "```nginx\n")
	if !ok {
		t.Fatal("docs/deployment.md has no nginx example")
	}
	block, _, _ := strings.Cut(rest, "```")
	var out []nginxLocation
	for _, m := range nginxLocationRE.FindAllStringSubmatch(block, -1) {
		out = append(out, nginxLocation{exact: m[1] != "", path: m[2], proxied: strings.Contains(m[3], "proxy_pass")})
	}
	if len(out) == 0 {
		t.Fatal("the nginx example has no location")
	}
	return out
}

// route picks the location nginx would for path: an exact match, else the
// longest prefix.
func route(locs []nginxLocation, path string) (nginxLocation, bool) {
	var best nginxLocation
	found := false
	for _, l := range locs {
		if l.exact {
			if l.path == path {
				return l, true
			}
			continue
		}
		if strings.HasPrefix(path, l.path) && (!found || len(l.path) > len(best.path)) {
			best, found = l, true
		}
	}
	return best, found
}

// patternPath is a ServeMux pattern's path as a request would have it:
// the method dropped, {wildcards} filled, {$} removed.
func patternPath(pattern string) string {
	if _, p, ok := strings.Cut(pattern, " "); ok {
		pattern = p
	}
	pattern = strings.ReplaceAll(pattern, "{$}", "")
	return regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(pattern, "x")
}

// notProxied are routes the example keeps off the public side on purpose.
var notProxied = map[string]string{
	"/metrics": "Prometheus scrapes it from inside",
}

// TestDeployment_NginxExampleRoutesEveryRoute starts brain with Slack,
// Linear (as an OAuth app, with its install links) and the console, and
// checks that the documented nginx example forwards every route it serves.
func TestDeployment_NginxExampleRoutesEveryRoute(t *testing.T) {
	locs := nginxExample(t)
	var patterns []string
	patterns = append(patterns, newSlackApp(t).app.api.Patterns()...)
	patterns = append(patterns, newOAuthApp(t).app.api.Patterns()...)
	for _, want := range []string{"GET /{$}", "/sessions/", "/approvals/", "GET /login", "GET /static/", "/slack/", "POST /linear/webhook", "GET /v1/sessions/{id}", "GET /readyz"} {
		if !slices.Contains(patterns, want) {
			t.Fatalf("brain does not register %q (of %q): the test no longer sees every route", want, patterns)
		}
	}
	for _, p := range patterns {
		path := patternPath(p)
		l, ok := route(locs, path)
		_, private := notProxied[path]
		switch {
		case private && ok && l.proxied:
			t.Errorf("%s (%s) is forwarded by the example; it should not be: %s", path, p, notProxied[path])
		case !private && (!ok || !l.proxied):
			t.Errorf("%s (route %q) is not forwarded by the nginx example in docs/deployment.md", path, p)
		}
	}
}

var envRefRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

// TestCompose_PassesEveryVariableTheExampleConfigReads checks compose.yaml
// against config.example.yaml: every ${VAR} the example config reads
// reaches brain's container, the postgres profile exists, and brain's
// health check asks /readyz.
func TestCompose_PassesEveryVariableTheExampleConfigReads(t *testing.T) {
	example, err := os.ReadFile("../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Profiles    []string          `yaml:"profiles"`
			Environment map[string]string `yaml:"environment"`
			DependsOn   any               `yaml:"depends_on"`
			Healthcheck struct {
				Test []string `yaml:"test"`
			} `yaml:"healthcheck"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	brain, ok := compose.Services["brain"]
	if !ok {
		t.Fatal("compose.yaml has no brain service")
	}
	read := map[string]bool{}
	for _, m := range envRefRE.FindAllStringSubmatch(string(example), -1) {
		if m[1] != "VAR" { // the example's own explanation of ${VAR}
			read[m[1]] = true
		}
	}
	if len(read) < 10 {
		t.Fatalf("found only %d variables in config.example.yaml: %v", len(read), read)
	}
	for name := range read {
		v, ok := brain.Environment[name]
		if !ok {
			t.Errorf("config.example.yaml reads ${%s}; compose.yaml does not pass it to brain", name)
			continue
		}
		if !strings.Contains(v, "${"+name) {
			t.Errorf("compose.yaml sets %s to %q, not from the environment", name, v)
		}
	}
	pg, ok := compose.Services["postgres"]
	if !ok || !slices.Contains(pg.Profiles, "postgres") {
		t.Errorf("compose.yaml has no postgres service in the postgres profile: %+v", pg)
	}
	if !strings.Contains(strings.Join(brain.Healthcheck.Test, " "), "/readyz") {
		t.Errorf("brain's health check does not ask /readyz: %q", brain.Healthcheck.Test)
	}
}

// TestDeployment_CaddyExampleForwardsAllButMetrics checks the Caddy
// example's shape: one reverse_proxy for the whole site (so every route
// brain registers reaches it) and /metrics answered by Caddy itself.
func TestDeployment_CaddyExampleForwardsAllButMetrics(t *testing.T) {
	raw, err := os.ReadFile("../docs/deployment.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "```caddy\n")
	if !ok {
		t.Fatal("docs/deployment.md has no Caddy example")
	}
	block, _, _ := strings.Cut(rest, "```")
	blocked := map[string]bool{}
	proxies := 0
	for _, line := range strings.Split(block, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "respond" && len(f) >= 3 && strings.HasPrefix(f[1], "/"):
			blocked[f[1]] = true
		case f[0] == "reverse_proxy":
			if len(f) != 2 || !strings.Contains(f[1], ":8080") {
				t.Errorf("reverse_proxy with a matcher forwards only part of brain: %q", line)
			}
			proxies++
		case f[0] == "handle" || f[0] == "route" || strings.HasPrefix(f[0], "@"):
			t.Errorf("the Caddy example routes by path (%q); it must forward every route brain registers", line)
		}
	}
	if proxies != 1 {
		t.Errorf("the Caddy example has %d reverse_proxy lines, want 1", proxies)
	}
	for path := range notProxied {
		if !blocked[path] {
			t.Errorf("the Caddy example forwards %s: %s", path, notProxied[path])
		}
	}
	for path := range blocked {
		if _, ok := notProxied[path]; !ok {
			t.Errorf("the Caddy example answers %s itself; brain serves it", path)
		}
	}
}
