package linearbridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"time"

	"brain/channels/linear"
	"brain/store"
	"brain/tools"
)

// Install paths, under public_url.
const (
	InstallPath  = "/linear/oauth/install"
	CallbackPath = "/linear/oauth/callback"
)

// stateTTL is how long an install link stays usable.
const stateTTL = 10 * time.Minute

// Installer serves the OAuth install flow: the install link redirects to
// Linear's consent page with a single-use, expiring state; the callback
// checks the state, exchanges the code, asks Linear which workspace it
// is, and stores the tokens. Every failure answers a plain page and
// stores nothing.
type Installer struct {
	Store        store.LinearTokens
	OAuth        linear.OAuth
	AuthorizeURL string // Linear's authorize endpoint
	ClientID     string
	PublicURL    string // brain's base URL; the redirect URI hangs off it
	APIURL       string // Linear's GraphQL endpoint ("" = Linear's own)
	Now          func() time.Time
	Log          *slog.Logger
	// Connected is told about each workspace stored (to run the webhooks
	// kept while it was disconnected).
	Connected func(ctx context.Context, organizationID string)

	starts installStarts
}

func (in *Installer) redirectURI() string { return in.PublicURL + CallbackPath }

// Install handles GET /linear/oauth/install.
func (in *Installer) Install(w http.ResponseWriter, r *http.Request) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	state := hex.EncodeToString(b[:])
	now := in.Now()
	if !in.starts.allow(r, now) {
		page(w, http.StatusTooManyRequests, "Too many installs in progress", "Finish or abandon the installs already started (they expire after "+stateTTL.String()+"), then try again.")
		return
	}
	if err := in.Store.SaveOAuthState(r.Context(), now, state, now.Add(stateTTL)); err != nil {
		in.Log.Error("save linear install state", tools.LogErr, err)
		page(w, http.StatusInternalServerError, "Could not start the install", "brain could not record the install request; see its log.")
		return
	}
	http.Redirect(w, r, linear.AuthorizeURL(in.AuthorizeURL, in.ClientID, in.redirectURI(), state), http.StatusFound)
}

// Callback handles GET /linear/oauth/callback.
func (in *Installer) Callback(w http.ResponseWriter, r *http.Request) {
	ctx, q := r.Context(), r.URL.Query()
	again := "Start again at " + in.PublicURL + InstallPath + "."
	state := q.Get("state")
	valid := false
	if state != "" {
		ok, err := in.Store.ConsumeOAuthState(ctx, in.Now(), state)
		if err != nil {
			in.Log.Error("check linear install state", tools.LogErr, err)
			page(w, http.StatusInternalServerError, "Install failed", "brain could not check the install request; see its log.")
			return
		}
		valid = ok
	}
	switch {
	case !valid:
		page(w, http.StatusBadRequest, "Install link expired or already used",
			"This install was not started here, took longer than "+stateTTL.String()+", or was already completed. Nothing was stored. "+again)
		return
	case q.Get("error") != "":
		page(w, http.StatusForbidden, "Linear did not grant access",
			fmt.Sprintf("Linear answered %q: the app was not installed and nothing was stored. %s", clip(q.Get("error"), 80), again))
		return
	case q.Get("code") == "":
		page(w, http.StatusBadRequest, "Install failed", "Linear sent no authorization code. Nothing was stored. "+again)
		return
	}
	g, err := in.OAuth.Exchange(ctx, q.Get("code"), in.redirectURI())
	if err != nil {
		in.Log.Warn("linear install: code exchange failed", tools.LogErr, err)
		page(w, http.StatusBadGateway, "Install failed", "Linear refused the code exchange ("+err.Error()+"). Check linear.client_id and linear.client_secret, and that the OAuth app's callback URL is "+in.redirectURI()+". Nothing was stored. "+again)
		return
	}
	v, err := linear.New(in.APIURL, g.AccessToken, nil, in.Log).Viewer(ctx)
	if err != nil {
		in.Log.Warn("linear install: viewer query failed", tools.LogErr, err)
		page(w, http.StatusBadGateway, "Install failed", "Linear did not say which workspace this is ("+err.Error()+"). Nothing was stored. "+again)
		return
	}
	now := in.Now()
	tok := store.LinearToken{
		OrganizationID: v.OrganizationID, OrganizationName: v.OrganizationName, URLKey: v.URLKey, AppUserID: v.UserID,
		AccessToken: g.AccessToken, RefreshToken: g.RefreshToken, Scope: g.Scope,
		Status: store.LinearConnected, UpdatedAt: now,
	}
	if g.ExpiresIn > 0 {
		tok.ExpiresAt = now.Add(g.ExpiresIn)
	}
	if err := in.Store.SaveLinearToken(ctx, tok); err != nil {
		in.Log.Error("store linear tokens", tools.LogOrg, v.OrganizationID, tools.LogErr, err)
		page(w, http.StatusInternalServerError, "Install failed", "brain could not store the workspace's tokens; see its log. "+again)
		return
	}
	in.Log.Info("linear workspace connected", tools.LogOrg, v.OrganizationID, tools.LogWorkspace, v.OrganizationName, tools.LogExpiresAt, tok.ExpiresAt)
	if in.Connected != nil {
		in.Connected(context.WithoutCancel(ctx), v.OrganizationID)
	}
	page(w, http.StatusOK, "Connected to Linear",
		fmt.Sprintf("brain is connected to the Linear workspace %s (%s). Delegate an issue to the app or mention it to start a session.", v.OrganizationName, v.URLKey))
}

// page answers a minimal HTML page: a title and one paragraph.
func page(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	t, p := html.EscapeString(title), html.EscapeString(text)
	fmt.Fprintf(w, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head>\n<body><h1>%s</h1>\n<p>%s</p></body></html>\n", t, t, p)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
