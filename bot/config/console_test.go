package config

import (
	"strings"
	"testing"
	"time"
)

func TestValidate_Console(t *testing.T) {
	signIn := func() *SlackSignInConfig { return &SlackSignInConfig{ClientID: "cid", ClientSecret: "sec"} }
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   []string // empty: valid
	}{
		{"defaults", func(c *Config) {}, nil},
		{"slack sign-in", func(c *Config) { c.PublicURL = "https://brain.example"; c.Console.SlackSignIn = signIn() }, nil},
		{"short ttl", func(c *Config) { c.Console.SessionTTL = Duration(time.Second) }, []string{"console.session_ttl: must be at least 1m"}},
		{"sign-in without keys or public_url", func(c *Config) { c.Console.SlackSignIn = &SlackSignInConfig{AuthorizeURL: "slack.com/x"} }, []string{
			"console.slack_signin.client_id: required",
			"console.slack_signin.client_secret: required",
			"public_url: required by console.slack_signin",
			`console.slack_signin.authorize_url: "slack.com/x" is not an absolute http(s) URL`,
		}},
		{"sign-in on a disabled console", func(c *Config) {
			c.PublicURL = "https://brain.example"
			c.Console.Disabled, c.Console.SlackSignIn = true, signIn()
		}, []string{"console.slack_signin: set, but console.disabled is true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.mutate(c)
			c.ApplyDefaults()
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if c.Console.SessionTTL.Std() != 12*time.Hour || (c.Console.SlackSignIn != nil && c.Console.SlackSignIn.AuthorizeURL != DefaultSlackAuthorizeURL) {
					t.Fatalf("defaults not applied: %+v", c.Console)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestSecrets_ConsoleClientSecret(t *testing.T) {
	c := validConfig()
	c.Console.SlackSignIn = &SlackSignInConfig{ClientID: "cid", ClientSecret: "console-client-secret"}
	found := false
	for _, s := range c.Secrets() {
		found = found || s == "console-client-secret"
	}
	if !found {
		t.Fatal("the Slack sign-in client secret is not scrubbed")
	}
}
