package bot

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"brain/bot/api"
)

// The webhooks answer failures like the API: the JSON error envelope with
// the request id, the same codes, their statuses unchanged (Slack and
// Linear retry on what they always did).
func TestWebhooks_FailuresAreEnvelopes(t *testing.T) {
	slackAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true,"user_id":"UBOT","team_id":"T1"}`)
	}))
	t.Cleanup(slackAPI.Close)
	ta := newTestApp(t, fmt.Sprintf(`slack: {bot_token: xoxb-test, signing_secret: slack-secret, api_url: %s/api/}
linear: {webhook_secret: linear-secret, access_token: lin-token, api_url: %s/graphql}
`, slackAPI.URL, slackAPI.URL), Options{})
	big := strings.Repeat("x", 2<<20) // over the webhooks' 1 MiB cap
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/slack/events", `{"type":"event_callback"}`, 401, "unauthorized"},
		{"POST", "/slack/interactions", "payload=%7B%7D", 401, "unauthorized"},
		{"POST", "/slack/events", big, 413, "too_large"},
		{"GET", "/slack/events", "", 405, "method_not_allowed"},
		{"POST", "/slack/other", "", 404, "not_found"},
		{"POST", "/linear/webhook", `{"type":"AgentSessionEvent"}`, 401, "unauthorized"},
		{"POST", "/linear/webhook", big, 413, "too_large"},
		{"GET", "/linear/webhook", "", 405, "method_not_allowed"},
	}
	for _, c := range cases {
		t.Run(c.method+c.path+fmt.Sprint(c.status), func(t *testing.T) {
			status, hdr, body := ta.do(c.method, c.path, c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			var env api.ErrorEnvelope
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatalf("not an envelope: %s", body)
			}
			if id := hdr.Get("X-Request-ID"); len(id) != 32 || env.RequestID != id {
				t.Fatalf("request id: header %q body %q", id, env.RequestID)
			}
			if env.Error.Code != c.code || env.Error.Message == "" {
				t.Fatalf("envelope %+v, want code %s", env, c.code)
			}
		})
	}
}
