package github

import (
	"context"
	"strings"
	"testing"
	"time"

	"brain/internal/egress"
)

// TestRepoTokens_AppMintsScopedReadTokens: an App's read token is minted
// for that repository alone with contents:read, cached per repository, and
// repositories off the allow-list get none.
func TestRepoTokens_AppMintsScopedReadTokens(t *testing.T) {
	key, keyPEM := testKey(t)
	clock := &testClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	f := newFakeGitHub(t)
	f.appKey, f.clock = &key.PublicKey, clock.Now
	rt, err := NewRepoTokens(Config{BaseURL: f.url(), Repos: []string{"acme/*"}, Now: clock.Now,
		App: &App{AppID: 123, InstallationID: 456, PrivateKey: keyPEM}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tok, err := rt.ReadToken(ctx, egress.TokenRequest{Repo: "acme/app"})
	if err != nil || tok != mintedToken(1) {
		t.Fatalf("ReadToken = %q, %v", tok, err)
	}
	if again, _ := rt.ReadToken(ctx, egress.TokenRequest{Repo: "acme/app"}); again != tok {
		t.Errorf("not cached: %q", again)
	}
	if other, _ := rt.ReadToken(ctx, egress.TokenRequest{Repo: "acme/lib"}); other != mintedToken(2) {
		t.Errorf("another repository shares a token: %q", other)
	}
	f.mu.Lock()
	mints := append([]string(nil), f.mints...)
	f.mu.Unlock()
	if len(mints) != 2 || !strings.Contains(mints[0], `"repositories":["app"]`) || !strings.Contains(mints[0], `"contents":"read"`) {
		t.Errorf("token requests: %q", mints)
	}
	if _, err := rt.ReadToken(ctx, egress.TokenRequest{Repo: "evil/app"}); err == nil || rt.AllowedRepo("evil/app") {
		t.Error("a repository off the allow-list got a token")
	}
	clock.Add(59 * time.Minute)
	if fresh, _ := rt.ReadToken(ctx, egress.TokenRequest{Repo: "acme/app"}); fresh == tok {
		t.Error("a token about to expire was handed out")
	}
}
