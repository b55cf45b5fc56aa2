// Package linear renders sessions into Linear through the Agent API: it
// emits agent activities (thought, action, elicitation, response, error) to
// an agent session with agentActivityCreate, and updates the session with
// agentSessionUpdate. Every activity carries a client-chosen id, so a retry
// (here, or by the caller after a crash) never posts it twice. Renderer
// maps a session's events to those activities.
//
// It imports engine (for events, questions and approvals), never bot,
// webhooks, store or another channel. Reading what people write back is
// webhooks/linearhook's job.
package linear

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// DefaultAPIURL is Linear's GraphQL endpoint.
const DefaultAPIURL = "https://api.linear.app/graphql"

// defaultTimeout bounds one HTTP exchange when New builds the http.Client.
const defaultTimeout = 15 * time.Second

// ErrEmptyBody is returned, without calling Linear, for an activity whose
// text is empty: Linear requires a body and rejects empty content.
var ErrEmptyBody = errors.New("linear activity without a body")

// Option is one choice of a select elicitation. Choosing it comes back as a
// prompted webhook whose body is Value; Label is what the person sees (the
// value when empty).
type Option struct {
	Value string `json:"value"`
	Label string `json:"label,omitempty"`
}

// Client emits agent activities to Linear. Safe for concurrent use.
type Client struct {
	url    string
	auth   string      // the static Authorization header; never logged
	tokens TokenSource // nil: use auth
	http   *http.Client
	log    *slog.Logger

	// attempts bounds the tries of one call (first try included); backoff
	// is the first retry's wait, doubled each time; maxRateWait is the
	// longest rate-limit wait the client sits out itself.
	attempts    int
	backoff     time.Duration
	maxRateWait time.Duration
}

// New returns a Client for the GraphQL endpoint apiURL ("" means
// DefaultAPIURL). accessToken is the app's OAuth access token (actor=app),
// sent as "Authorization: Bearer <token>"; a personal API key (lin_api_...)
// is sent bare, as Linear wants it. httpClient nil means a client with a
// 15 s timeout; log nil discards.
func New(apiURL, accessToken string, httpClient *http.Client, log *slog.Logger) *Client {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: defaultTimeout}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{
		url:         apiURL,
		auth:        authorization(accessToken),
		http:        httpClient,
		log:         log,
		attempts:    4,
		backoff:     500 * time.Millisecond,
		maxRateWait: 30 * time.Second,
	}
}

// TokenSource hands out the access token of one Linear workspace, for a
// Client whose tokens expire. Neither method may put a token in its error.
type TokenSource interface {
	// Token returns an access token to use now (refreshing it first when
	// it is about to expire).
	Token(ctx context.Context) (string, error)
	// Refresh is called once when Linear refused rejected as
	// unauthenticated; it returns the token to try instead.
	Refresh(ctx context.Context, rejected string) (string, error)
}

// NewWithTokens is New for a workspace whose OAuth tokens expire: each
// request asks tokens for the current one, and a request Linear refuses
// as unauthenticated is refreshed once and sent again.
func NewWithTokens(apiURL string, tokens TokenSource, httpClient *http.Client, log *slog.Logger) *Client {
	c := New(apiURL, "", httpClient, log)
	c.tokens = tokens
	return c
}

// authorization is the Authorization header of the next request.
func (c *Client) authorization(ctx context.Context) (string, error) {
	if c.tokens == nil {
		return c.auth, nil
	}
	tok, err := c.tokens.Token(ctx)
	if err != nil {
		return "", err
	}
	return "Bearer " + tok, nil
}

// authorization builds the Authorization header for a token.
func authorization(token string) string {
	token = strings.TrimSpace(token)
	switch {
	case token == "", strings.HasPrefix(token, "lin_api_"), strings.HasPrefix(token, "Bearer "):
		return token
	default:
		return "Bearer " + token
	}
}

// Thought emits a thought: a short note of what the agent is doing. An
// ephemeral thought is replaced by the next activity ("still working").
func (c *Client) Thought(ctx context.Context, agentSessionID, id, body string, ephemeral bool) error {
	return c.emit(ctx, activity{ID: id, SessionID: agentSessionID, Content: textContent{"thought", body}, Ephemeral: ephemeral})
}

// Action emits an action: a tool call, named by action (the tool), with a
// one-line parameter ("" allowed, sent as "" never null) and, once it
// finished, its result ("" means not finished yet, and no result is sent).
// Never put secrets in any of them.
func (c *Client) Action(ctx context.Context, agentSessionID, id, action, parameter, result string) error {
	if strings.TrimSpace(action) == "" {
		return fmt.Errorf("linear action activity: %w", ErrEmptyBody)
	}
	return c.emit(ctx, activity{ID: id, SessionID: agentSessionID, Content: actionContent{"action", action, parameter, result}})
}

// Elicitation asks the person something. With options it carries the
// select signal and signalMetadata {options: [{value, label}]}; Linear
// shows them as choices, and a pick comes back as a prompted webhook whose
// body is the option's value (free text dismisses the options).
func (c *Client) Elicitation(ctx context.Context, agentSessionID, id, body string, options []Option) error {
	a := activity{ID: id, SessionID: agentSessionID, Content: textContent{"elicitation", body}}
	if len(options) > 0 {
		for i, o := range options {
			if o.Value == "" {
				return fmt.Errorf("linear elicitation option %d has no value", i)
			}
		}
		a.Signal = "select"
		a.SignalMetadata = &selectMetadata{Options: options}
	}
	return c.emit(ctx, a)
}

// AuthElicitation asks the person to link an account: an elicitation with
// Linear's auth signal, whose signalMetadata carries the url to open and,
// when set, the Linear user it is for (userId) and the provider's name.
// Linear shows the link until a newer activity arrives.
func (c *Client) AuthElicitation(ctx context.Context, agentSessionID, id, body, url, userID, provider string) error {
	if url == "" {
		return errors.New("linear auth elicitation: no url")
	}
	return c.emit(ctx, activity{ID: id, SessionID: agentSessionID, Content: textContent{"elicitation", body},
		Signal: "auth", SignalMetadata: authMetadata{URL: url, UserID: userID, ProviderName: provider}})
}

// Response emits the agent's final answer; Linear also shows it as a
// comment and marks the session complete.
func (c *Client) Response(ctx context.Context, agentSessionID, id, body string) error {
	return c.emit(ctx, activity{ID: id, SessionID: agentSessionID, Content: textContent{"response", body}})
}

// Error reports a failure; Linear shows it and marks the session errored.
func (c *Client) Error(ctx context.Context, agentSessionID, id, body string) error {
	return c.emit(ctx, activity{ID: id, SessionID: agentSessionID, Content: textContent{"error", body}})
}

// AddExternalURL adds a labelled link (a dashboard page, a pull request) to
// the agent session with agentSessionUpdate's addedExternalUrls. Setting
// one also keeps a new session from showing as unresponsive. Adding the
// same url again is harmless, so retries are safe.
func (c *Client) AddExternalURL(ctx context.Context, agentSessionID, label, url string) error {
	if agentSessionID == "" || url == "" {
		return errors.New("linear add external url: session id and url are required")
	}
	vars := map[string]any{
		"id":    agentSessionID,
		"input": map[string]any{"addedExternalUrls": []map[string]string{{"label": label, "url": url}}},
	}
	return c.call(ctx, opSessionUpdate, sessionUpdateMutation, vars)
}

// Mutations, passed with their inputs as variables.
const (
	opActivityCreate = "agentActivityCreate"
	opSessionUpdate  = "agentSessionUpdate"

	activityCreateMutation = `mutation AgentActivityCreate($input: AgentActivityCreateInput!) {
  agentActivityCreate(input: $input) { success agentActivity { id } }
}`
	sessionUpdateMutation = `mutation AgentSessionUpdate($id: String!, $input: AgentSessionUpdateInput!) {
  agentSessionUpdate(id: $id, input: $input) { success }
}`
)

// activity is AgentActivityCreateInput.
type activity struct {
	ID        string `json:"id"`
	SessionID string `json:"agentSessionId"`
	Content   any    `json:"content"`
	Ephemeral bool   `json:"ephemeral,omitempty"`
	Signal    string `json:"signal,omitempty"`
	// SignalMetadata is a *selectMetadata or an authMetadata.
	SignalMetadata any `json:"signalMetadata,omitempty"`
}

// authMetadata is the auth signal's: the link, and whom it is for.
type authMetadata struct {
	URL          string `json:"url"`
	UserID       string `json:"userId,omitempty"`
	ProviderName string `json:"providerName,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Body string `json:"body"`
}

type actionContent struct {
	Type      string `json:"type"`
	Action    string `json:"action"`
	Parameter string `json:"parameter"`
	Result    string `json:"result,omitempty"`
}

type selectMetadata struct {
	Options []Option `json:"options"`
}

// emit checks an activity and creates it. A missing id gets a random one
// here, once, so the retries of this call still share it.
func (c *Client) emit(ctx context.Context, a activity) error {
	if a.SessionID == "" {
		return errors.New("linear activity without an agent session id")
	}
	if t, ok := a.Content.(textContent); ok && strings.TrimSpace(t.Body) == "" {
		return fmt.Errorf("linear %s activity: %w", t.Type, ErrEmptyBody)
	}
	switch {
	case a.ID == "":
		a.ID = randomID()
	case !validActivityID(a.ID):
		return fmt.Errorf("linear activity id %q is not a UUID v4", a.ID)
	}
	if err := c.call(ctx, opActivityCreate, activityCreateMutation, map[string]any{"input": a}); err != nil {
		return fmt.Errorf("activity %s: %w", a.ID, err)
	}
	return nil
}

// PlanStep is one step of an agent session's plan as Linear shows it:
// status pending, inProgress, completed or canceled.
type PlanStep struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// SetPlan replaces the agent session's plan (agentSessionUpdate's plan, a
// list of steps). Setting the same plan again is harmless.
func (c *Client) SetPlan(ctx context.Context, agentSessionID string, steps []PlanStep) error {
	if agentSessionID == "" {
		return errors.New("linear set plan: session id is required")
	}
	if steps == nil {
		steps = []PlanStep{}
	}
	vars := map[string]any{"id": agentSessionID, "input": map[string]any{"plan": steps}}
	return c.call(ctx, opSessionUpdate, sessionUpdateMutation, vars)
}
