package linearhook

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

// Fixture ids, shaped like Linear's (UUIDs).
const (
	sessionID  = "5c2a2e8e-6d3a-4e0b-9a43-0d7a1c5b8f11"
	activityID = "a1b2c3d4-0000-4000-8000-000000000001"
	creatorID  = "df3fc33e-32f3-4e65-bae7-6f8f36bdd55f"
	issueID    = "baffe010-6475-4e9a-9aa8-9544e31bf95f"
)

// createdEvent is an AgentSessionEvent created payload as Linear sends it
// (AgentSessionEventWebhookPayload), for a mention in a comment thread.
func createdEvent(t testing.TB, at time.Time) map[string]any {
	t.Helper()
	return map[string]any{
		"type":             "AgentSessionEvent",
		"action":           "created",
		"createdAt":        "2026-01-08T16:33:12.000Z",
		"organizationId":   "org-1",
		"oauthClientId":    "oauth-1",
		"appUserId":        "app-user-1",
		"webhookId":        "wh-1",
		"webhookTimestamp": at.UnixMilli(),
		"promptContext":    "<issue identifier=\"ENG-123\"><title>Fix checkout</title></issue>\n<primary-directive-thread>Please implement this</primary-directive-thread>",
		"guidance":         []any{map[string]any{"body": "Always follow coding standards"}},
		"previousComments": []any{
			map[string]any{"id": "c-0", "body": "Earlier note", "userId": "u-9", "issueId": issueID},
		},
		"agentSession": map[string]any{
			"id":             sessionID,
			"appUserId":      "app-user-1",
			"organizationId": "org-1",
			"status":         "pending",
			"type":           "commentThread",
			"createdAt":      "2026-01-08T16:33:12.000Z",
			"updatedAt":      "2026-01-08T16:33:12.000Z",
			"creatorId":      creatorID,
			"creator":        map[string]any{"id": creatorID, "name": "John Doe", "email": "john@example.com"},
			"commentId":      "c-1",
			"comment":        map[string]any{"id": "c-1", "body": "  @brain please implement this  ", "userId": creatorID, "issueId": issueID},
			"issueId":        issueID,
			"issue": map[string]any{
				"id": issueID, "identifier": "ENG-123", "title": "Fix checkout", "teamId": "team-1",
				"team": map[string]any{"id": "team-1", "key": "ENG", "name": "Engineering"},
				"url":  "https://linear.app/acme/issue/ENG-123/fix-checkout", "description": "Make it work",
			},
		},
	}
}

// promptedEvent is an AgentSessionEvent prompted payload carrying a
// person's prompt activity; signal may be "".
func promptedEvent(t testing.TB, at time.Time, body, signal string) map[string]any {
	t.Helper()
	ev := createdEvent(t, at)
	ev["action"] = "prompted"
	delete(ev, "promptContext")
	delete(ev, "previousComments")
	delete(ev, "guidance")
	act := map[string]any{
		"id": activityID, "agentSessionId": sessionID, "userId": creatorID,
		"createdAt": "2026-01-08T16:40:00.000Z", "updatedAt": "2026-01-08T16:40:00.000Z",
		"content": map[string]any{"type": "prompt", "body": body},
	}
	if signal != "" {
		act["signal"] = signal
	}
	ev["agentActivity"] = act
	return ev
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// msBody is a minimal body with only a timestamp.
func msBody(at time.Time) []byte {
	return []byte(`{"webhookTimestamp":` + strconv.FormatInt(at.UnixMilli(), 10) + `}`)
}
