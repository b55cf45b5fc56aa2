package config

import (
	"slices"
	"strings"
	"testing"
)

func TestGitHubChat_ValidatesDefaultsAndScrubs(t *testing.T) {
	env := map[string]string{"KEY": "test-key"}
	c := mustLoadYAML(t, minimalYAML+`github: {webhook_secret: whsec-github-1, token: ghs_chattoken_1, login: brainy, repos: [{repo: acme/*}]}
schedules:
  - {name: digest, cron: "@daily", prompt: hi, post_to: {github_issue: acme/web#12}}
`, env)
	if c.GitHub.Agent != DefaultAgent || c.Schedules[0].PostTo.GitHubIssue != "acme/web#12" {
		t.Fatalf("%+v", c.GitHub)
	}
	secrets := c.Secrets()
	if !slices.Contains(secrets, "whsec-github-1") || !slices.Contains(secrets, "ghs_chattoken_1") {
		t.Fatal("the github block's secrets are not scrubbed")
	}
	for yaml, want := range map[string]string{
		`github: {token: t, login: b}`:                                                                                                                   "github.webhook_secret",
		`github: {webhook_secret: s, login: b}`:                                                                                                          "github.token",
		`github: {webhook_secret: s, token: t}`:                                                                                                          "github.login",
		`github: {webhook_secret: s, token: t, login: b, repos: [{repo: acme}]}`:                                                                         "github.repos[0].repo",
		`github: {webhook_secret: s, token: t, login: b, agent: nobody}`:                                                                                 "github.agent",
		"schedules:\n  - {name: d, cron: \"@daily\", prompt: hi, post_to: {github_issue: acme/web#12}}":                                                  "needs the github block",
		`github: {webhook_secret: s, token: t, login: b, app: {app_id: 1, installation_id: 2, private_key_file: k}}`:                                     "github.token: set token or app, not both",
		`github: {webhook_secret: s, login: b, app: {installation_id: 2, private_key_file: k}}`:                                                          "github.app.app_id: must be >= 1",
		`github: {webhook_secret: s, login: b, app: {app_id: 1, installation_id: 2}}`:                                                                    "github.app.private_key_file: required",
		"github: {webhook_secret: s, token: t, login: b}\nschedules:\n  - {name: d, cron: \"@daily\", prompt: hi, post_to: {github_issue: acme-web-12}}": "is not owner/repo#number",
	} {
		_, err := loadYAML(t, minimalYAML+yaml+"\n", env)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", yaml, err, want)
		}
	}
}
