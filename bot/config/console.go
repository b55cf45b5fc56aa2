package config

import (
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// ConsoleConfig is the console block: the web console brain serves at /.
type ConsoleConfig struct {
	// Disabled turns the console off; / then answers 404 like any
	// unknown path.
	Disabled bool `yaml:"disabled"`
	// SessionTTL is how long a sign-in lasts (default 12h).
	SessionTTL Duration `yaml:"session_ttl"`
	// SlackSignIn, when set, offers "Sign in with Slack" (OpenID Connect):
	// decisions made on the web then carry the person's Slack user id and
	// follow the approver rules as a click in Slack would.
	SlackSignIn *SlackSignInConfig `yaml:"slack_signin"`
	// Admins are Slack user ids (U… or W…) who, signed in with Slack, see
	// and act on every session, approval and schedule, as a key holder
	// does. Other people see only their own sessions and the approvals
	// they may decide.
	Admins []string `yaml:"admins"`
}

// SlackSignInConfig is console.slack_signin: a Slack app's OAuth client
// with the openid scope. The redirect URL to register with Slack is
// public_url + /login/slack/callback. The token exchange
// (openid.connect.token) goes to slack.api_url when it is set.
type SlackSignInConfig struct {
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	// TeamID, when set, admits only members of that workspace.
	TeamID string `yaml:"team_id"`
	// AuthorizeURL is Slack's authorization page; empty = Slack's own
	// (tests point it at a fake).
	AuthorizeURL string `yaml:"authorize_url"`
}

// DefaultSlackAuthorizeURL is where "Sign in with Slack" sends the browser.
const DefaultSlackAuthorizeURL = "https://slack.com/openid/connect/authorize"

const defaultConsoleSessionTTL = 12 * time.Hour

func (c *Config) applyConsoleDefaults() {
	setDefault(&c.Console.SessionTTL, Duration(defaultConsoleSessionTTL))
	if s := c.Console.SlackSignIn; s != nil {
		setDefault(&s.AuthorizeURL, DefaultSlackAuthorizeURL)
	}
}

// slackUserID is what a Slack user id looks like.
var slackUserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)

func (c *Config) validateConsole(p *problems) {
	atLeast(p, "console.session_ttl", int64(c.Console.SessionTTL), int64(time.Minute), "at least 1m")
	for i, id := range c.Console.Admins {
		if !slackUserID.MatchString(id) {
			p.add(fmt.Sprintf("console.admins[%d]", i), "%q is not a Slack user id (U… or W…, as in the profile's \"Copy member ID\")", id)
		}
	}
	if len(c.Console.Admins) > 0 && c.Console.SlackSignIn == nil {
		p.add("console.admins", "set, but console.slack_signin is not: admins sign in with Slack")
	}
	s := c.Console.SlackSignIn
	if s == nil {
		return
	}
	if c.Console.Disabled {
		p.add("console.slack_signin", "set, but console.disabled is true")
	}
	if s.ClientID == "" {
		p.add("console.slack_signin.client_id", "required (the Slack app's client id)")
	}
	if s.ClientSecret == "" {
		p.add("console.slack_signin.client_secret", "required (the Slack app's client secret)")
	}
	if c.PublicURL == "" {
		p.add("public_url", "required by console.slack_signin (the redirect URL is public_url + /login/slack/callback)")
	}
	if u, err := url.Parse(s.AuthorizeURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		p.add("console.slack_signin.authorize_url", "%q is not an absolute http(s) URL", s.AuthorizeURL)
	}
}
