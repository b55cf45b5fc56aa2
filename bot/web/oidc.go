package web

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"brain/tools"
)

// SlackCallbackPath is the redirect URL to register with the Slack app,
// under public_url.
const SlackCallbackPath = "/login/slack/callback"

// SlackSignIn is "Sign in with Slack" (OpenID Connect, code flow).
type SlackSignIn struct {
	ClientID, ClientSecret string
	// TeamID, when set, admits only that workspace's members.
	TeamID string
	// AuthorizeURL is Slack's authorization page.
	AuthorizeURL string
	// APIURL is the Slack Web API base ("" = Slack's own), where
	// openid.connect.token is called.
	APIURL string
	// RedirectURL is public_url + SlackCallbackPath.
	RedirectURL string
	// HTTPClient makes the token exchange (default: 10 s timeout).
	HTTPClient *http.Client
}

// Sign-in flow limits.
const (
	stateCookie = "brain_console_state"
	stateTTL    = 10 * time.Minute
)

// slackStart sends the browser to Slack's authorization page.
func (s *Server) slackStart(w http.ResponseWriter, r *http.Request, v visitor) {
	sc := s.cfg.SlackSignIn
	if sc == nil {
		s.fail(w, r, v, http.StatusNotFound, "Sign in with Slack is not configured (console.slack_signin).")
		return
	}
	state, nonce := newToken(), newToken()
	// The flow lives in this browser's cookie (statecookie.go); brain
	// keeps nothing until the callback.
	sealed := s.states.seal(pendingSignIn{State: state, Nonce: nonce, Next: safeNext(r.URL.Query().Get("next")), Expires: s.now().Add(stateTTL).Unix()})
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: sealed, Path: "/login/slack", MaxAge: int(stateTTL.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil || strings.HasPrefix(s.cfg.PublicURL, "https://")})
	q := url.Values{
		"response_type": {"code"}, "scope": {"openid profile"}, "client_id": {sc.ClientID},
		"state": {state}, "nonce": {nonce}, "redirect_uri": {sc.RedirectURL},
	}
	if sc.TeamID != "" {
		q.Set("team", sc.TeamID)
	}
	sep := "?"
	if strings.Contains(sc.AuthorizeURL, "?") {
		sep = "&"
	}
	http.Redirect(w, r, sc.AuthorizeURL+sep+q.Encode(), http.StatusFound)
}

// slackCallback finishes a Slack sign-in: the state must be the one this
// browser started, the code is exchanged for an id_token whose claims
// name the person.
func (s *Server) slackCallback(w http.ResponseWriter, r *http.Request, v visitor) {
	sc := s.cfg.SlackSignIn
	if sc == nil {
		s.fail(w, r, v, http.StatusNotFound, "Sign in with Slack is not configured (console.slack_signin).")
		return
	}
	q := r.URL.Query()
	refuse := func(status int, msg string) {
		s.log.Info("console slack sign-in refused", tools.LogReason, msg)
		s.fail(w, r, v, status, "Sign in with Slack failed: "+msg)
	}
	if e := q.Get("error"); e != "" {
		refuse(http.StatusForbidden, "Slack answered "+clip(e, 100)+".")
		return
	}
	state := q.Get("state")
	c, err := r.Cookie(stateCookie)
	if state == "" || err != nil {
		refuse(http.StatusForbidden, "this sign-in was not started in this browser; start again.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: "", Path: "/login/slack", MaxAge: -1})
	ps, ok := s.states.open(c.Value, s.now())
	if !ok {
		refuse(http.StatusForbidden, "this sign-in expired or was already used; start again.")
		return
	}
	if subtle.ConstantTimeCompare([]byte(ps.State), []byte(state)) != 1 {
		refuse(http.StatusForbidden, "this sign-in was not started in this browser; start again.")
		return
	}
	code := q.Get("code")
	if code == "" || len(code) > 1024 {
		refuse(http.StatusBadRequest, "Slack sent no code.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	client := sc.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	var opts []slack.OAuthOption
	if sc.APIURL != "" {
		opts = append(opts, slack.OAuthOptionAPIURL(strings.TrimSuffix(sc.APIURL, "/")+"/"))
	}
	tok, err := slack.GetOpenIDConnectTokenContext(ctx, client, sc.ClientID, sc.ClientSecret, code, sc.RedirectURL, opts...)
	if err != nil {
		s.log.Warn("slack openid.connect.token", tools.LogErr, err)
		refuse(http.StatusBadGateway, "Slack did not accept the sign-in ("+clip(err.Error(), 200)+").")
		return
	}
	claims, err := parseIDToken(tok.IdToken, sc.ClientID, ps.Nonce, s.now())
	if err != nil {
		refuse(http.StatusForbidden, err.Error()+".")
		return
	}
	if sc.TeamID != "" && claims.TeamID != sc.TeamID {
		refuse(http.StatusForbidden, "this console admits members of workspace "+sc.TeamID+" only.")
		return
	}
	name := orDefault(claims.Name, claims.UserID)
	s.signIn(w, r, v, visitor{signedIn: true, name: name + " (Slack)", by: claims.UserID,
		admin: slices.Contains(s.cfg.Admins, claims.UserID)}, ps.Next)
}
