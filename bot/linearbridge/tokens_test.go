package linearbridge

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/bot/config"
	"brain/channels/linear"
	"brain/channels/linear/linearfake"
	"brain/store"
	"brain/store/sqlite"
)

// testClock is a clock tests move by hand.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *testClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// oauthFake is the fake Linear as an OAuth app with one workspace whose
// access tokens live an hour.
func oauthFake(t *testing.T, clock *testClock) *linearfake.Server {
	t.Helper()
	fake := linearfake.New("")
	t.Cleanup(fake.Close)
	fake.EnableOAuth("client-1", "secret-1", time.Hour)
	fake.SetClock(clock.Now)
	fake.AddOrganization(linearfake.Organization{ID: "org-a", Name: "Acme", URLKey: "acme", AppUserID: "app-a", AppName: "brain"})
	return fake
}

func openStore(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// installed runs the code exchange the callback would and stores the
// grant, returning it.
func installed(t *testing.T, fake *linearfake.Server, st store.LinearTokens, clock *testClock) store.LinearToken {
	t.Helper()
	oauth := linear.OAuth{ClientID: "client-1", ClientSecret: "secret-1", TokenURL: fake.TokenURL()}
	in := &Installer{Store: st, OAuth: oauth, AuthorizeURL: fake.AuthorizeURL(), ClientID: "client-1",
		PublicURL: "https://brain.example.com", APIURL: fake.URL(), Now: clock.Now, Log: discard()}
	code := authorizeCode(t, fake, in)
	g, err := oauth.Exchange(context.Background(), code, in.redirectURI())
	if err != nil {
		t.Fatal(err)
	}
	tok := store.LinearToken{OrganizationID: "org-a", OrganizationName: "Acme", AccessToken: g.AccessToken, RefreshToken: g.RefreshToken,
		ExpiresAt: clock.Now().Add(g.ExpiresIn), UpdatedAt: clock.Now()}
	if err := st.SaveLinearToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	return tok
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTokens(st store.LinearTokens, fake *linearfake.Server, clock *testClock, log *slog.Logger) *Tokens {
	return &Tokens{Store: st, Now: clock.Now, Log: log, Install: "https://brain.example.com" + InstallPath,
		OAuth: linear.OAuth{ClientID: "client-1", ClientSecret: "secret-1", TokenURL: fake.TokenURL()}}
}

func TestTokens_ConcurrentCallsDuringExpiryRefreshOnce(t *testing.T) {
	clock := newTestClock()
	fake := oauthFake(t, clock)
	st := openStore(t, filepath.Join(t.TempDir(), "brain.db"))
	installed(t, fake, st, clock)
	tokens := newTokens(st, fake, clock, discard())
	client := linear.NewWithTokens(fake.URL(), tokens.Source("org-a"), nil, discard())

	clock.Advance(time.Hour + time.Second) // every stored token has expired
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := client.Thought(context.Background(), "as-1", "", "working "+string(rune('a'+i)), false); err != nil {
				t.Errorf("Thought: %v", err)
			}
		}()
	}
	wg.Wait()
	if n := fake.Refreshes("org-a"); n != 1 {
		t.Fatalf("%d refreshes for 12 concurrent calls, want 1", n)
	}
	if got := len(fake.Activities("as-1")); got != 12 {
		t.Fatalf("%d activities, want 12", got)
	}
}

func TestTokens_RestartBetweenExpiryAndRefresh(t *testing.T) {
	clock := newTestClock()
	fake := oauthFake(t, clock)
	path := filepath.Join(t.TempDir(), "brain.db")
	first := openStore(t, path)
	old := installed(t, fake, first, clock)
	first.Close()

	// Down past the expiry; a new process on the same database refreshes
	// on first use, with the refresh token the old one stored.
	clock.Advance(2 * time.Hour)
	st := openStore(t, path)
	tokens := newTokens(st, fake, clock, discard())
	client := linear.NewWithTokens(fake.URL(), tokens.Source("org-a"), nil, discard())
	if err := client.Thought(context.Background(), "as-1", "", "back", false); err != nil {
		t.Fatalf("Thought after restart: %v", err)
	}
	got, err := st.LinearToken(context.Background(), "org-a")
	if err != nil || got.RefreshToken == old.RefreshToken || got.AccessToken == old.AccessToken || !got.ExpiresAt.After(clock.Now()) {
		t.Fatalf("stored after refresh = %+v, %v", got, err)
	}
	if n := fake.Refreshes("org-a"); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
}

func TestTokens_TwoProcessesRefreshOnce(t *testing.T) {
	clock := newTestClock()
	fake := oauthFake(t, clock)
	path := filepath.Join(t.TempDir(), "brain.db")
	installed(t, fake, openStore(t, path), clock)
	clock.Advance(time.Hour)
	// Two processes: separate stores and token managers, one database.
	var wg sync.WaitGroup
	for range 2 {
		tokens := newTokens(openStore(t, path), fake, clock, discard())
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := tokens.Source("org-a").Token(context.Background()); err != nil {
					t.Errorf("Token: %v", err)
				}
			}()
		}
	}
	wg.Wait()
	if n := fake.Refreshes("org-a"); n != 1 {
		t.Fatalf("%d refreshes across two processes, want 1 (a second would spend a rotated token)", n)
	}
}

func TestTokens_AuthErrorRefreshesOnce(t *testing.T) {
	clock := newTestClock()
	fake := oauthFake(t, clock)
	st := openStore(t, filepath.Join(t.TempDir(), "brain.db"))
	tok := installed(t, fake, st, clock)
	// The stored expiry says the token is fine, Linear says otherwise.
	tok.ExpiresAt = clock.Now().Add(100 * time.Hour)
	if err := st.SaveLinearToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Hour)
	client := linear.NewWithTokens(fake.URL(), newTokens(st, fake, clock, discard()).Source("org-a"), nil, discard())
	if err := client.Thought(context.Background(), "as-1", "", "hi", false); err != nil {
		t.Fatalf("Thought: %v", err)
	}
	if n := fake.Refreshes("org-a"); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
}

func TestTokens_RevokedIsReportedOnceAndStored(t *testing.T) {
	clock := newTestClock()
	fake := oauthFake(t, clock)
	st := openStore(t, filepath.Join(t.TempDir(), "brain.db"))
	tok := installed(t, fake, st, clock)
	fake.RevokeTokens("org-a")
	clock.Advance(time.Hour)
	var logs syncBuffer
	tokens := newTokens(st, fake, clock, slog.New(slog.NewTextHandler(&logs, nil)))
	client := linear.NewWithTokens(fake.URL(), tokens.Source("org-a"), nil, discard())
	for range 3 {
		err := client.Thought(context.Background(), "as-1", "", "hi", false)
		if !errors.Is(err, ErrDisconnected) {
			t.Fatalf("Thought = %v, want ErrDisconnected", err)
		}
		for _, secret := range []string{tok.AccessToken, tok.RefreshToken, "secret-1"} {
			if contains(err.Error(), secret) {
				t.Fatalf("error %q carries a secret", err)
			}
		}
	}
	got, _ := st.LinearToken(context.Background(), "org-a")
	if got.Status != store.LinearRevoked || got.Problem == "" {
		t.Fatalf("stored = %+v, want revoked", got)
	}
	if n := countOf(logs.String(), "install the app again"); n != 1 {
		t.Fatalf("the refusal was logged %d times, want once:\n%s", n, logs.String())
	}
	for _, secret := range []string{tok.AccessToken, tok.RefreshToken, "secret-1"} {
		if contains(logs.String(), secret) {
			t.Fatalf("logs carry a secret:\n%s", logs.String())
		}
	}
}

func TestBridge_PostOutcomeOncePerRun(t *testing.T) {
	b, fake := newBridgeAndFake(t)
	fake.AddIssue(linearfake.Issue{ID: "i-9", Identifier: "ENG-9", StateType: "started"})
	s := config.ScheduleConfig{Name: "nightly", PostTo: config.PostToConfig{LinearIssue: "ENG-9"}}
	fire := time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)
	for range 2 { // a retry, or a second watcher of the run
		if err := b.PostOutcome(context.Background(), s, fire, "completed", "All quiet."); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PostOutcome(context.Background(), s, fire.Add(24*time.Hour), "completed", "Still quiet."); err != nil {
		t.Fatal(err)
	}
	cs := fake.Comments("i-9")
	if len(cs) != 2 || !strings.Contains(cs[0].Body, "nightly") || !strings.Contains(cs[0].Body, "All quiet.") || !strings.Contains(cs[1].Body, "Still quiet.") {
		t.Fatalf("comments %+v, want one per run", cs)
	}
	s.PostTo.LinearIssue = "NOPE-1"
	if err := b.PostOutcome(context.Background(), s, fire, "completed", "x"); err == nil || !strings.Contains(err.Error(), "NOPE-1") {
		t.Fatalf("unknown issue: %v", err)
	}
}

func TestBridge_CreatedIsAcknowledgedBeforeTheWorkerRuns(t *testing.T) {
	b, fake := newBridgeAndFake(t)
	// Only the inbox runs: no worker to acknowledge the session.
	if err := b.inbox.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.inbox.Stop(context.Background()) })
	const sid = "5c2a2e8e-6d3a-4e0b-9a43-0d7a1c5b8f11"
	if st := postCreated(t, b.HTTP(), sid, "d0e1f2a3-0000-4000-8000-000000000001"); st != 200 {
		t.Fatalf("status %d", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := fake.WaitActivities(ctx, sid, 1)
	if err != nil || got[0].Type != "thought" || got[0].ClientID != ackID(sid) {
		t.Fatalf("activities %+v, %v: want the acknowledgement", got, err)
	}
	b.acks.Wait()
}

func TestTokens_FailedRefreshReleasesTheLease(t *testing.T) {
	clock := newTestClock()
	fake := oauthFake(t, clock)
	st := openStore(t, filepath.Join(t.TempDir(), "brain.db"))
	installed(t, fake, st, clock)
	clock.Advance(time.Hour)
	down := newTokens(st, fake, clock, discard())
	down.OAuth.TokenURL = "http://127.0.0.1:1/oauth/token" // nothing listens
	if _, err := down.Source("org-a").Token(context.Background()); err == nil || errors.Is(err, ErrDisconnected) {
		t.Fatalf("Token with the token endpoint down = %v, want a transient error", err)
	}
	start := time.Now()
	if _, err := newTokens(st, fake, clock, discard()).Source("org-a").Token(context.Background()); err != nil {
		t.Fatalf("Token once the endpoint is back: %v", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("the next refresh waited %s for a lease nobody held", waited)
	}
	if got, _ := st.LinearToken(context.Background(), "org-a"); got.Status != store.LinearConnected {
		t.Fatalf("a transient failure changed the status to %q", got.Status)
	}
}
