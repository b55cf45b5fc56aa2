package bot

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"brain/bot/api/client"
	"brain/store"
)

// TestAPI_PeopleAndConnections: an admin links a person's identities,
// lists connections (scope and expiry, never tokens) and revokes one, whose
// tokens are then gone from the store; bad input is refused with nothing
// stored.
func TestAPI_PeopleAndConnections(t *testing.T) {
	ta := newTestApp(t, "", Options{})
	ctx := context.Background()
	var p struct {
		ID         string                                 `json:"id"`
		Identities []struct{ Surface, ExternalID string } `json:"identities"`
	}
	ta.must(http.StatusOK, "POST", "/v1/people", map[string]any{"id": "alice", "name": "Alice"}, &p)
	ta.must(http.StatusOK, "POST", "/v1/people/alice/identities", map[string]any{"surface": "slack", "external_id": "U1"}, nil)
	ta.must(http.StatusOK, "POST", "/v1/people/alice/identities", map[string]any{"surface": "github", "external_id": "alice-gh"}, &p)
	if len(p.Identities) != 2 {
		t.Fatalf("person = %+v", p)
	}
	for _, bad := range []map[string]any{{"id": ""}, {"id": strings.Repeat("x", 300)}, {"id": "a", "extra": 1}} {
		if status, _, _ := ta.do("POST", "/v1/people", bad); status != http.StatusBadRequest {
			t.Errorf("POST /v1/people %v = %d, want 400", bad, status)
		}
	}
	if status, _, _ := ta.do("POST", "/v1/people/nobody/identities", map[string]any{"surface": "slack", "external_id": "U9"}); status != http.StatusNotFound {
		t.Errorf("link to an unknown person = %d, want 404", status)
	}
	if got, err := ta.app.store.PersonByIdentity(ctx, store.Identity{Surface: "slack", ExternalID: "U1"}); err != nil || got.ID != "alice" {
		t.Fatalf("PersonByIdentity = %+v, %v", got, err)
	}

	now := time.Now().UTC()
	secret := "gho_user_token_6f1e2d"
	if err := ta.app.store.SaveConnection(ctx, store.Connection{ID: "c1", PersonID: "alice", Provider: "github", Account: "alice-gh",
		AccessToken: secret, RefreshToken: "ghr_refresh_0a9b", Scope: "repo", ExpiresAt: now.Add(8 * time.Hour), UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	status, _, body := ta.do("GET", "/v1/connections?person=alice", nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"provider":"github"`) || !strings.Contains(string(body), `"scope":"repo"`) ||
		strings.Contains(string(body), secret) || strings.Contains(string(body), "ghr_refresh") {
		t.Fatalf("GET /v1/connections = %d %s", status, body)
	}
	var c struct{ Status, Problem string }
	ta.must(http.StatusOK, "POST", "/v1/connections/c1/revoke", nil, &c)
	if c.Status != store.ConnectionRevoked || !strings.Contains(c.Problem, "revoked by") {
		t.Fatalf("after revoke = %+v", c)
	}
	got, _ := ta.app.store.ConnectionByID(ctx, "c1")
	if got.AccessToken != "" || got.RefreshToken != "" {
		t.Error("a revoked connection kept its tokens")
	}
	if status, _, _ := ta.do("POST", "/v1/connections/nope/revoke", nil); status != http.StatusNotFound {
		t.Errorf("revoke unknown = %d, want 404", status)
	}
	ta.must(http.StatusNoContent, "DELETE", "/v1/people/alice", nil, nil)
	if _, err := ta.app.store.ConnectionByID(ctx, "c1"); err == nil {
		t.Error("erasing the person kept their connection")
	}
}

// TestDaemon_ConnectionsThroughTheClient: brain connections list|revoke's
// client against the running daemon shows no token and revokes.
func TestDaemon_ConnectionsThroughTheClient(t *testing.T) {
	ta := newTestApp(t, "api_keys: [{name: ops, key: connections-client-key-0f3c8e1d9a7b6c5d4e3f2a1b}]\n", Options{})
	ctx := context.Background()
	now := time.Now().UTC()
	if err := ta.app.store.SaveConnection(ctx, store.Connection{ID: "c1", PersonID: "bob", Provider: "mcp:tracker",
		AccessToken: "tok-bob-1", RefreshToken: "ref-bob-1", UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	cfg := *ta.app.cfg
	cfg.Listen = ta.app.Addr()
	d, err := client.Dial(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	bob := "bob"
	list, err := d.Connections(ctx, &bob)
	if err != nil || len(list) != 1 || list[0].Provider != "mcp:tracker" || list[0].Status != store.ConnectionConnected {
		t.Fatalf("Connections = %+v, %v", list, err)
	}
	c, err := d.RevokeConnection(ctx, "c1", "")
	if err != nil || c.Status != store.ConnectionRevoked || !strings.Contains(c.Problem, "ops") {
		t.Fatalf("RevokeConnection = %+v, %v", c, err)
	}
	if _, err := d.RevokeConnection(ctx, "c1", "someone-else"); err == nil {
		t.Error("a key without act_for revoked as someone else")
	}
	// brain connections service-account: marked, audited as the key's.
	if c, err := d.MarkServiceAccount(ctx, "c1", true); err != nil || !c.ServiceAccount {
		t.Fatalf("MarkServiceAccount = %+v, %v", c, err)
	}
	entries, err := ta.app.store.AuditEntries(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var by string
	for _, e := range entries {
		if e.Action == "connection.service_account" {
			by = e.Actor
		}
	}
	if by != "key:ops" {
		t.Errorf("the mark is audited as %q, want key:ops", by)
	}
	if c, err := d.MarkServiceAccount(ctx, "c1", false); err != nil || c.ServiceAccount {
		t.Fatalf("unmark = %+v, %v", c, err)
	}
	if _, err := d.MarkServiceAccount(ctx, "nope", true); err == nil {
		t.Error("marked an unknown connection")
	}
}
