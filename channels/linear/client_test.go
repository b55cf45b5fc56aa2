package linear

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"brain/channels/linear/linearfake"
)

// Each activity type sends exactly the AgentActivityCreateInput Linear
// documents.
func TestClient_ActivityInputs(t *testing.T) {
	id := ActivityID(testSession, "1")
	tests := []struct {
		name string
		emit func(ctx context.Context, c *Client) error
		want string
	}{
		{"thought", func(ctx context.Context, c *Client) error {
			return c.Thought(ctx, testSession, id, "Looking into it", false)
		},
			`{"id":"` + id + `","agentSessionId":"` + testSession + `","content":{"type":"thought","body":"Looking into it"}}`},
		{"ephemeral thought", func(ctx context.Context, c *Client) error {
			return c.Thought(ctx, testSession, id, "Still working", true)
		},
			`{"id":"` + id + `","agentSessionId":"` + testSession + `","content":{"type":"thought","body":"Still working"},"ephemeral":true}`},
		{"action started", func(ctx context.Context, c *Client) error { return c.Action(ctx, testSession, id, "web_fetch", "", "") },
			`{"id":"` + id + `","agentSessionId":"` + testSession + `","content":{"type":"action","action":"web_fetch","parameter":""}}`},
		{"action done", func(ctx context.Context, c *Client) error {
			return c.Action(ctx, testSession, id, "web_search", "go 1.26 release", "5 results")
		}, `{"id":"` + id + `","agentSessionId":"` + testSession + `","content":{"type":"action","action":"web_search","parameter":"go 1.26 release","result":"5 results"}}`},
		{"elicitation with options", func(ctx context.Context, c *Client) error {
			return c.Elicitation(ctx, testSession, id, "Which package?", []Option{{Value: "src/frontend", Label: "frontend"}, {Value: "src/backend"}})
		}, `{"id":"` + id + `","agentSessionId":"` + testSession + `","content":{"type":"elicitation","body":"Which package?"},"signal":"select","signalMetadata":{"options":[{"value":"src/frontend","label":"frontend"},{"value":"src/backend"}]}}`},
		{"elicitation without options", func(ctx context.Context, c *Client) error {
			return c.Elicitation(ctx, testSession, id, "Where are you located?", nil)
		}, `{"id":"` + id + `","agentSessionId":"` + testSession + `","content":{"type":"elicitation","body":"Where are you located?"}}`},
		{"response", func(ctx context.Context, c *Client) error {
			return c.Response(ctx, testSession, id, "Done: **3** files")
		},
			`{"id":"` + id + `","agentSessionId":"` + testSession + `","content":{"type":"response","body":"Done: **3** files"}}`},
		{"error", func(ctx context.Context, c *Client) error { return c.Error(ctx, testSession, id, "Stopped.") },
			`{"id":"` + id + `","agentSessionId":"` + testSession + `","content":{"type":"error","body":"Stopped."}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, fake := newClient(t)
			if err := tt.emit(testCtx(t), c); err != nil {
				t.Fatalf("emit: %v", err)
			}
			acts := fake.Activities(testSession)
			if len(acts) != 1 || acts[0].ID != id || acts[0].ClientID != id {
				t.Fatalf("activities %+v", acts)
			}
			jsonEqual(t, acts[0].Input, tt.want)
			reqs := fake.Requests()
			if len(reqs) != 1 || reqs[0].Operation != "agentActivityCreate" || !strings.Contains(reqs[0].Query, "agentActivityCreate(input: $input)") {
				t.Fatalf("requests %+v", reqs)
			}
		})
	}
}

func TestClient_AuthHeader(t *testing.T) {
	c, fake := newClient(t)
	if err := c.Thought(testCtx(t), testSession, ActivityID("a"), "hi", false); err != nil {
		t.Fatal(err)
	}
	if got := fake.Requests()[0].Authorization; got != "Bearer "+testToken {
		t.Fatalf("Authorization %q", got)
	}
}

// Personal API keys go bare, as Linear wants them.
func TestClient_APIKeyHeader(t *testing.T) {
	fake := linearfake.New("lin_api_abc")
	defer fake.Close()
	c := New(fake.URL(), "lin_api_abc", nil, nil)
	if err := c.Thought(testCtx(t), testSession, ActivityID("a"), "hi", false); err != nil {
		t.Fatal(err)
	}
	if got := fake.Requests()[0].Authorization; got != "lin_api_abc" {
		t.Fatalf("Authorization %q", got)
	}
}

// A wrong token is a permanent error, not retried.
func TestClient_Unauthorized(t *testing.T) {
	fake := linearfake.New(testToken)
	defer fake.Close()
	c := New(fake.URL(), "wrong", nil, nil)
	c.backoff = time.Millisecond
	err := c.Response(testCtx(t), testSession, ActivityID("a"), "hi")
	ae, ok := errors.AsType[*APIError](err)
	if !ok || ae.Code != "AUTHENTICATION_ERROR" || ae.Status != http.StatusUnauthorized {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Fatalf("error leaks the token: %v", err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

// The activity is stored but the answer is lost (a 502 after the work):
// the retry sends the same id and Linear keeps one activity.
func TestClient_IdempotentRetryAfter5xx(t *testing.T) {
	c, fake := newClient(t)
	fake.Inject(1, linearfake.Fault{Status: http.StatusBadGateway, AfterApply: true})
	id := ActivityID(testSession, "7")
	if err := c.Response(testCtx(t), testSession, id, "All done"); err != nil {
		t.Fatalf("Response: %v", err)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Status != http.StatusBadGateway || reqs[1].Status != http.StatusOK {
		t.Fatalf("requests %+v", reqs)
	}
	if string(reqs[0].Variables) != string(reqs[1].Variables) {
		t.Fatalf("retry sent other variables:\n%s\n%s", reqs[0].Variables, reqs[1].Variables)
	}
	if acts := fake.Activities(testSession); len(acts) != 1 || acts[0].ID != id {
		t.Fatalf("activities %+v", acts)
	}
}

// Without an id the client picks one, once, so its retries still dedupe.
func TestClient_MissingIDStillIdempotent(t *testing.T) {
	c, fake := newClient(t)
	fake.Inject(1, linearfake.Fault{Status: http.StatusServiceUnavailable, AfterApply: true})
	if err := c.Thought(testCtx(t), testSession, "", "thinking", true); err != nil {
		t.Fatalf("Thought: %v", err)
	}
	acts := fake.Activities(testSession)
	if len(acts) != 1 || !validActivityID(acts[0].ClientID) {
		t.Fatalf("activities %+v", acts)
	}
}

func TestClient_Retries5xxThenSucceeds(t *testing.T) {
	c, fake := newClient(t)
	fake.FailHTTP(2, http.StatusServiceUnavailable)
	fake.FailGraphQL(1, "INTERNAL_ERROR", "oops")
	if err := c.Thought(testCtx(t), testSession, ActivityID("x"), "hi", false); err != nil {
		t.Fatalf("Thought: %v", err)
	}
	if n, acts := len(fake.Requests()), fake.Activities(testSession); n != 4 || len(acts) != 1 {
		t.Fatalf("%d requests, activities %+v", n, acts)
	}
}

func TestClient_GivesUpAfterAttempts(t *testing.T) {
	c, fake := newClient(t)
	fake.FailHTTP(100, http.StatusInternalServerError)
	err := c.Thought(testCtx(t), testSession, ActivityID("x"), "hi", false)
	if ae, ok := errors.AsType[*APIError](err); !ok || ae.Status != http.StatusInternalServerError {
		t.Fatalf("err %v", err)
	}
	if n := len(fake.Requests()); n != c.attempts {
		t.Fatalf("%d requests, want %d", n, c.attempts)
	}
}

// Waiting between retries never outlives ctx.
func TestClient_RetriesBoundedByContext(t *testing.T) {
	c, fake := newClient(t)
	c.backoff = 200 * time.Millisecond
	c.attempts = 100
	fake.FailHTTP(1000, http.StatusBadGateway)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Thought(ctx, testSession, ActivityID("x"), "hi", false)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
	if ae, ok := errors.AsType[*APIError](err); !ok || ae.Status != http.StatusBadGateway {
		t.Fatalf("err %v", err)
	}
}

// GraphQL errors arrive with HTTP 200 and must not pass for success.
func TestClient_GraphQLErrorSurfaced(t *testing.T) {
	c, fake := newClient(t)
	fake.FailGraphQL(1, "INVALID_INPUT", "Body is too long")
	err := c.Response(testCtx(t), testSession, ActivityID("x"), "hello")
	ae, ok := errors.AsType[*APIError](err)
	if !ok || ae.Status != http.StatusOK || ae.Code != "INVALID_INPUT" || ae.Message != "Body is too long" {
		t.Fatalf("err %v", err)
	}
	if _, limited := errors.AsType[*RateLimitError](err); limited {
		t.Fatal("an invalid input is not a rate limit")
	}
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("%d requests: a permanent error was retried", n)
	}
	if len(fake.Activities(testSession)) != 0 {
		t.Fatal("activity recorded")
	}
}

// The fake's own validation (Linear's documented rules) surfaces the same way.
func TestClient_ValidationErrorSurfaced(t *testing.T) {
	c, _ := newClient(t)
	err := c.Elicitation(testCtx(t), "", ActivityID("x"), "Which?", nil)
	if err == nil {
		t.Fatal("no error for a missing session id")
	}
	c2, fake := newClient(t)
	other := ActivityID("shared")
	if err := c2.Thought(testCtx(t), "other-session", other, "x", false); err != nil {
		t.Fatal(err)
	}
	err = c2.Thought(testCtx(t), testSession, other, "x", false)
	if ae, ok := errors.AsType[*APIError](err); !ok || ae.Code != "INVALID_INPUT" {
		t.Fatalf("err %v", err)
	}
	if len(fake.Activities(testSession)) != 0 {
		t.Fatal("recorded an activity under a used id")
	}
}

// A long rate limit comes back typed, with Linear's wait, unretried.
func TestClient_RateLimitTyped(t *testing.T) {
	c, fake := newClient(t)
	fake.RateLimit(10, 2*time.Minute)
	err := c.Thought(testCtx(t), testSession, ActivityID("x"), "hi", false)
	rl, ok := errors.AsType[*RateLimitError](err)
	if !ok || rl.Code != "RATELIMITED" || rl.Status != http.StatusOK || rl.RetryAfter < time.Minute || rl.RetryAfter > 2*time.Minute {
		t.Fatalf("err %v", err)
	}
	if ae, ok := errors.AsType[*APIError](err); !ok || ae.Code != "RATELIMITED" {
		t.Fatalf("APIError not found in %v", err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

// A short rate limit is waited out and retried.
func TestClient_RateLimitShortWaitRetried(t *testing.T) {
	c, fake := newClient(t)
	fake.RateLimit(1, 0)
	if err := c.Thought(testCtx(t), testSession, ActivityID("x"), "hi", false); err != nil {
		t.Fatalf("Thought: %v", err)
	}
	if reqs := fake.Requests(); len(reqs) != 2 || reqs[0].ErrorCode != "RATELIMITED" {
		t.Fatalf("requests %+v", reqs)
	}
}

// A dropped connection is retried with the same id.
func TestClient_TransportErrorRetried(t *testing.T) {
	fake := linearfake.New(testToken)
	defer fake.Close()
	var calls atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("connection reset by peer")
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := New(fake.URL(), testToken, hc, nil)
	c.backoff = time.Millisecond
	if err := c.Response(testCtx(t), testSession, ActivityID("x"), "done"); err != nil {
		t.Fatalf("Response: %v", err)
	}
	if calls.Load() != 2 || len(fake.Activities(testSession)) != 1 {
		t.Fatalf("%d calls, activities %+v", calls.Load(), fake.Activities(testSession))
	}
}

// Nonsense is refused before anything is sent.
func TestClient_RefusedLocally(t *testing.T) {
	c, fake := newClient(t)
	ctx := testCtx(t)
	id := ActivityID("x")
	for name, err := range map[string]error{
		"empty response":     c.Response(ctx, testSession, id, "  "),
		"empty thought":      c.Thought(ctx, testSession, id, "", true),
		"empty action":       c.Action(ctx, testSession, id, "", "p", "r"),
		"bad id":             c.Error(ctx, testSession, "not-a-uuid", "x"),
		"v5 id":              c.Error(ctx, testSession, "6ba7b810-9dad-51d1-80b4-00c04fd430c8", "x"),
		"option no value":    c.Elicitation(ctx, testSession, id, "Pick", []Option{{Label: "A"}}),
		"no session":         c.Response(ctx, "", id, "x"),
		"external url no id": c.AddExternalURL(ctx, "", "Dash", "https://x"),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if !errors.Is(c.Response(ctx, testSession, id, ""), ErrEmptyBody) {
		t.Error("empty body is not ErrEmptyBody")
	}
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

func TestClient_AddExternalURL(t *testing.T) {
	c, fake := newClient(t)
	if err := c.AddExternalURL(testCtx(t), testSession, "Dashboard", "https://brain.example/s/1"); err != nil {
		t.Fatal(err)
	}
	ups := fake.SessionUpdates(testSession)
	if len(ups) != 1 {
		t.Fatalf("updates %+v", ups)
	}
	jsonEqual(t, ups[0].Input, `{"addedExternalUrls":[{"label":"Dashboard","url":"https://brain.example/s/1"}]}`)
}

func TestNew_Defaults(t *testing.T) {
	c := New("", "tok", nil, nil)
	if c.url != DefaultAPIURL || c.auth != "Bearer tok" || c.http == nil || c.log == nil {
		t.Fatalf("client %+v", c)
	}
	for token, want := range map[string]string{"tok": "Bearer tok", " tok ": "Bearer tok", "lin_api_x": "lin_api_x", "Bearer x": "Bearer x", "": ""} {
		if got := authorization(token); got != want {
			t.Errorf("authorization(%q) = %q, want %q", token, got, want)
		}
	}
}
