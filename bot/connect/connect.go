// Package connect runs the OAuth flows that connect an account to brain:
// a flow starts with a link (state bound to the person, the PKCE verifier
// sealed in the store's connect_flows), the provider sends the person back
// to /oauth/callback, and the grant is stored, sealed, as the person's
// connection (or the workspace's). It also serves brain's OAuth client ID
// metadata document, and keeps connections' tokens for the tools that use
// them (Tokens: one refresh across replicas).
//
// Providers are MCP servers with auth: oauth ("mcp:<id>"), discovered
// from the server, and authorization servers configured by hand
// (Endpoints): GitHub App user tokens ("github") and tools.http tools
// with oauth ("http:<tool>").
package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"brain/engine"
	"brain/internal/oauthclient"
	"brain/store"
	"brain/tools"
)

// Routes this package serves.
const (
	CallbackPath = "/oauth/callback"
	MetadataPath = "/oauth/client-metadata.json"
)

// flowTTL is how long a connect link stays usable.
const flowTTL = 15 * time.Minute

// Provider is an account brain can connect: an OAuth-protected server.
type Provider struct {
	Name      string // "mcp:<id>"
	ServerURL string // the protected resource discovery starts from
	Client    *oauthclient.Client
	// PerPerson: each person connects their own; else one connection for
	// the workspace, connected by an admin.
	PerPerson bool
	// Endpoints, when set, is the authorization server as configured;
	// nothing is discovered from ServerURL.
	Endpoints *Endpoints
}

// Service starts and finishes connect flows.
type Service struct {
	Store     store.Connections
	Providers map[string]Provider
	// Metadata is brain's client ID metadata document (nil: none served).
	Metadata []byte
	Now      func() time.Time
	NewID    func() string
	Log      *slog.Logger
	// OnConnected is told of each new connection (the MCP bridge
	// reconnects the server), with where the flow was started from (a
	// tool call that needed it; nil for a link asked for directly).
	OnConnected func(provider, personID string, from *Origin)
	// Verify, when set, checks a grant before it is stored (the account
	// it is for is the person's): an error refuses it and nothing is
	// stored; an *engine.Error's message is shown to the person.
	Verify func(ctx context.Context, provider, personID string, tok oauthclient.Token) error
}

// ProviderNames lists the providers, sorted.
func (s *Service) ProviderNames() []string {
	out := make([]string, 0, len(s.Providers))
	for n := range s.Providers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Start begins connecting personID ("" = the workspace) to a provider and
// returns the URL to send them to. It discovers the provider's
// authorization server and registers brain's client there when needed.
func (s *Service) Start(ctx context.Context, personID, provider string) (string, error) {
	return s.StartFrom(ctx, personID, provider, nil)
}

// StartFrom is Start for a link sent because a tool call needed the
// connection: from is kept with the flow and handed to OnConnected.
func (s *Service) StartFrom(ctx context.Context, personID, provider string, from *Origin) (string, error) {
	p, ok := s.Providers[provider]
	if !ok {
		return "", engine.Errorf(engine.CodeNotFound, "no provider %q to connect (known: %v)", provider, s.ProviderNames())
	}
	if p.PerPerson && personID == "" {
		return "", engine.Errorf(engine.CodeInvalid, "%s is connected per person: name the person", provider)
	}
	if !p.PerPerson && personID != "" {
		return "", engine.Errorf(engine.CodeInvalid, "%s has one connection for the workspace: name no person", provider)
	}
	d, scope, err := p.discover(ctx)
	if err != nil {
		return "", engine.Errorf(engine.CodeInvalid, "%s: %v", provider, err)
	}
	f, err := p.Client.Start(ctx, d, scope)
	if err != nil {
		return "", engine.Errorf(engine.CodeInvalid, "%s: %v", provider, err)
	}
	detail, err := json.Marshal(flowDetail{Flow: f, Origin: from})
	if err != nil {
		return "", err
	}
	now := s.Now()
	if err := s.Store.SaveConnectFlow(ctx, now, store.ConnectFlow{State: f.State, PersonID: personID, Provider: provider,
		Verifier: f.Verifier, Detail: detail, ExpiresAt: now.Add(flowTTL), CreatedAt: now}); err != nil {
		return "", fmt.Errorf("save connect flow: %w", err)
	}
	return f.URL, nil
}

// Callback serves GET /oauth/callback: it uses the flow up (once), checks
// the answer, redeems the code and stores the connection. The page tells
// the person what happened; it never shows a token.
func (s *Service) Callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" || len(state) > 200 {
		page(w, http.StatusBadRequest, "This link is not a connect link brain made.")
		return
	}
	fl, ok, err := s.Store.ConsumeConnectFlow(r.Context(), s.Now(), state)
	if err != nil {
		s.Log.Error("connect callback failed", tools.LogErr, err)
		page(w, http.StatusInternalServerError, "Something went wrong; start again from brain.")
		return
	}
	if !ok {
		page(w, http.StatusBadRequest, "This connect link was used already or has expired; start again from brain.")
		return
	}
	p, ok := s.Providers[fl.Provider]
	var d flowDetail
	if !ok || json.Unmarshal(fl.Detail, &d) != nil {
		page(w, http.StatusBadRequest, "brain no longer knows this provider; start again from brain.")
		return
	}
	f := d.Flow
	f.Verifier = fl.Verifier
	tok, err := p.Client.Finish(r.Context(), f, q)
	if err != nil {
		s.Log.Warn("connect failed", tools.LogProvider, fl.Provider, tools.LogPerson, fl.PersonID, tools.LogErr, err.Error())
		page(w, http.StatusBadRequest, "The connection failed: "+err.Error())
		return
	}
	if s.Verify != nil {
		if err := s.Verify(r.Context(), fl.Provider, fl.PersonID, tok); err != nil {
			s.Log.Warn("connect refused", tools.LogProvider, fl.Provider, tools.LogPerson, fl.PersonID, tools.LogErr, err.Error())
			msg := "brain could not check whose account this is; nothing was stored. Start again from brain."
			var ee *engine.Error
			if errors.As(err, &ee) {
				msg = ee.Message
			}
			page(w, http.StatusForbidden, "Not connected: "+msg)
			return
		}
	}
	t := s.Tokens(fl.PersonID, fl.Provider)
	if err := t.Save(r.Context(), tok); err != nil {
		s.Log.Error("connect: save the connection failed", tools.LogErr, err)
		page(w, http.StatusInternalServerError, "Something went wrong; start again from brain.")
		return
	}
	s.Log.Info("connection made", tools.LogProvider, fl.Provider, tools.LogPerson, fl.PersonID)
	if s.OnConnected != nil {
		s.OnConnected(fl.Provider, fl.PersonID, d.Origin)
	}
	if d.Origin != nil && strings.HasPrefix(d.Origin.Return, "/") && !strings.HasPrefix(d.Origin.Return, "//") {
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, d.Origin.Return, http.StatusSeeOther)
		return
	}
	page(w, http.StatusOK, "Connected "+fl.Provider+". You can close this tab and go back to brain.")
}

// Tokens is the connection of personID ("" = the workspace) to provider.
func (s *Service) Tokens(personID, provider string) *Tokens {
	return &Tokens{Store: s.Store, PersonID: personID, Provider: provider, Now: s.Now, NewID: s.NewID, Log: s.Log}
}

// ServeMetadata serves GET /oauth/client-metadata.json.
func (s *Service) ServeMetadata(w http.ResponseWriter, _ *http.Request) {
	if s.Metadata == nil {
		http.NotFound(w, nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, _ = w.Write(s.Metadata)
}

func page(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>brain</title><p>%s</p>\n", html.EscapeString(msg))
}
