package githubbridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/webhooks/githubhook"
)

// fakeAPI answers comments, permissions and the rate limit; down makes
// every call fail.
type fakeAPI struct {
	mu       sync.Mutex
	comments []string
	down     bool
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if f.down {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"Bad credentials"}`))
		return
	}
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/comments"):
		var in struct{ Body string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		f.comments = append(f.comments, r.URL.Path+" "+in.Body)
		_, _ = w.Write([]byte(`{"id":1}`))
	case strings.HasSuffix(r.URL.Path, "/collaborators/writer/permission"):
		_, _ = w.Write([]byte(`{"permission":"write"}`))
	case strings.Contains(r.URL.Path, "/collaborators/"):
		_, _ = w.Write([]byte(`{"permission":"read"}`))
	case r.URL.Path == "/rate_limit":
		_, _ = w.Write([]byte(`{"resources":{}}`))
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func newTestPlatform(t *testing.T, g *config.GitHubChatConfig) (*Platform, *fakeAPI) {
	f := &fakeAPI{}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	g.BaseURL, g.Token, g.Login = srv.URL, "tok", "brainy"
	cfg := &config.Config{GitHub: g}
	b, err := New(g, "", nil, nil, srv.Client(), time.Now, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return &Platform{Bridge: b, cfg: cfg}, f
}

func TestPlatform_OutcomeLinkStatus(t *testing.T) {
	p, f := newTestPlatform(t, &config.GitHubChatConfig{})
	ctx := context.Background()
	if err := p.PostOutcome(ctx, config.ScheduleConfig{Name: "digest"}, time.Now(), "completed", "x"); err != nil || len(f.comments) != 0 {
		t.Fatalf("a schedule without post_to.github_issue posted: %v %v", err, f.comments)
	}
	s := config.ScheduleConfig{Name: "digest", PostTo: config.PostToConfig{GitHubIssue: "acme/web#12"}}
	if err := p.PostOutcome(ctx, s, time.Now(), "completed", "All green."); err != nil {
		t.Fatal(err)
	}
	if len(f.comments) != 1 || !strings.HasPrefix(f.comments[0], "/repos/acme/web/issues/12/comments **digest**") || !strings.Contains(f.comments[0], "All green.") {
		t.Fatalf("comments %q", f.comments)
	}
	if got := p.SessionLink(engine.Session{ThreadKey: "github:acme/web#12"}); got != "https://github.com/acme/web/issues/12" {
		t.Fatal(got)
	}
	if got := p.SessionLink(engine.Session{ThreadKey: "slack:C1/1.2"}); got != "" {
		t.Fatal(got)
	}
	if sec := p.Status(ctx, nil); sec.State != "ok" || sec.Rows[0].Value != "connected" {
		t.Fatalf("status %+v", sec)
	}
	f.mu.Lock()
	f.down = true
	f.mu.Unlock()
	if sec := p.Status(ctx, nil); sec.State != "warn" {
		t.Fatalf("a refused token is a warning, not down: %+v", sec)
	}
	if err := p.Ready(ctx); err != nil {
		t.Fatal("GitHub gates readiness")
	}
}

func TestBridge_MayStart(t *testing.T) {
	ctx := context.Background()
	it := func(owner, repo, author string) githubhook.Item {
		return githubhook.Item{Owner: owner, Repo: repo, Author: author}
	}
	def, _ := newTestPlatform(t, &config.GitHubChatConfig{})
	listed, _ := newTestPlatform(t, &config.GitHubChatConfig{Repos: []config.GitHubRepoAccess{
		{Repo: "acme/open-*", Users: []string{"*"}},
		{Repo: "acme/web", Users: []string{"Ann"}},
		{Repo: "acme/*"},
	}})
	for _, c := range []struct {
		p    *Platform
		item githubhook.Item
		want bool
	}{
		{def, it("acme", "web", "writer"), true},
		{def, it("acme", "web", "reader"), false},
		{listed, it("acme", "open-source", "anyone"), true},
		{listed, it("acme", "web", "ann"), true},
		{listed, it("acme", "web", "writer"), false}, // the first match counts
		{listed, it("acme", "api", "writer"), true},
		{listed, it("acme", "api", "reader"), false},
		{listed, it("other", "web", "writer"), false},
	} {
		if got, err := c.p.mayStart(ctx, c.item); err != nil || got != c.want {
			t.Errorf("%+v: %v %v", c.item, got, err)
		}
	}
}
