package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/internal/contracts"
)

const githubToken = "github_pat_11BRAINTEST0aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// githubRepo is one repository of a fake GitHub REST API, enough for the
// create-issue approval: the repository, its issue list and issue creation.
type githubRepo struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []string
	auths    []string
	issues   []map[string]any
	dropNext bool // create the next issue, then drop the connection unanswered
}

func newGitHubRepo(t *testing.T) *githubRepo {
	t.Helper()
	g := &githubRepo{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/acme/widgets", func(w http.ResponseWriter, r *http.Request) {
		writeGitHub(w, http.StatusOK, map[string]any{"id": 1296269, "name": "widgets", "full_name": "acme/widgets",
			"html_url": "https://github.com/acme/widgets", "has_issues": true, "default_branch": "main"})
	})
	mux.HandleFunc("GET /repos/acme/widgets/issues", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		out := []any{}
		for i := len(g.issues) - 1; i >= 0; i-- { // newest first
			out = append(out, g.issues[i])
		}
		g.mu.Unlock()
		writeGitHub(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST /repos/acme/widgets/issues", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Title, Body string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		g.mu.Lock()
		n := 1347 + len(g.issues)
		issue := map[string]any{
			"id": n, "number": n, "title": in.Title, "body": in.Body, "state": "open",
			"url":            fmt.Sprintf("https://api.github.com/repos/acme/widgets/issues/%d", n),
			"repository_url": "https://api.github.com/repos/acme/widgets",
			"html_url":       fmt.Sprintf("https://github.com/acme/widgets/issues/%d", n),
			"user":           map[string]any{"login": "brain-bot", "id": 1}, "labels": []any{}, "comments": 0,
			"created_at": "2026-03-01T12:00:00Z", "updated_at": "2026-03-01T12:00:00Z",
		}
		g.issues = append(g.issues, issue)
		drop := g.dropNext
		g.dropNext = false
		g.mu.Unlock()
		if drop {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		writeGitHub(w, http.StatusCreated, issue)
	})
	// Every request and answer is checked against GitHub's published
	// description; the fake's answers are laid on its examples.
	api := contracts.LoadGitHub(t).Checked(mux, func(v string) { t.Error(v) }, nil)
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.requests = append(g.requests, r.Method+" "+r.URL.Path)
		g.auths = append(g.auths, r.Header.Get("Authorization"))
		g.mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func writeGitHub(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (g *githubRepo) created() []map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]map[string]any(nil), g.issues...)
}

func (g *githubRepo) log() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.requests...)
}

// newGitHubApp starts a brain whose agent has github_create_issue, the
// token coming from the environment; at cleanup it checks the token never
// reached a model request, a log line or the database.
func newGitHubApp(t *testing.T, g *githubRepo) *testApp {
	t.Helper()
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	extra := fmt.Sprintf(`    tools: [github_create_issue, github_get_issue]
tools:
  github:
    token: ${GITHUB_TOKEN}
    base_url: %s
    repos: [acme/*]
`, g.srv.URL)
	env := func(k string) (string, bool) {
		if k == "GITHUB_TOKEN" {
			return githubToken, true
		}
		return "", false
	}
	cfg, err := config.Load(writeConfig(t, dir, fake.URL(), extra), env)
	if err != nil {
		t.Fatal(err)
	}
	ta := &testApp{t: t, fake: fake, logs: &syncBuffer{}}
	cfg.Log.Level = "debug"
	app, err := New(context.Background(), cfg, Options{Stderr: ta.logs})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ta.app, ta.base = app, "http://"+app.Addr()
	t.Cleanup(func() {
		fake.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = app.Shutdown(ctx)
		for _, req := range fake.Requests() {
			if strings.Contains(string(req.Raw), githubToken) {
				t.Errorf("the GitHub token reached a model request")
			}
		}
		if strings.Contains(ta.logs.String(), githubToken) {
			t.Errorf("the GitHub token reached the logs")
		}
		db, _ := os.ReadFile(filepath.Join(dir, "data", "brain.db"))
		wal, _ := os.ReadFile(filepath.Join(dir, "data", "brain.db-wal"))
		if strings.Contains(string(db)+string(wal), githubToken) {
			t.Errorf("the GitHub token is stored in the database")
		}
		for _, a := range g.auths {
			if a != "Bearer "+githubToken {
				t.Errorf("GitHub got Authorization %q", a)
			}
		}
	})
	return ta
}

// proposeIssue has the model call github_create_issue and returns the
// pending approval.
func (ta *testApp) proposeIssue(title string) engine.Approval {
	ta.t.Helper()
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "github_create_issue", Input: fmt.Sprintf(`{"repo":"acme/widgets","title":%q,"body":"Seen on floor 3."}`, title)}),
		fakemodel.Text("I proposed the issue."),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "file an issue: "+title)
	ta.waitTurns(s.ID, 1)
	var list struct{ Approvals []engine.Approval }
	ta.must(http.StatusOK, "GET", "/v1/approvals?status=pending&session_id="+s.ID, nil, &list)
	if len(list.Approvals) != 1 {
		ta.t.Fatalf("pending approvals %+v", list.Approvals)
	}
	return list.Approvals[0]
}

// TestGitHub_CreateIssueApprovedOnce: the model's github_create_issue
// becomes an approval card; approving it through the API creates exactly
// one issue, stamped with the decision id; denying creates nothing.
func TestGitHub_CreateIssueApprovedOnce(t *testing.T) {
	g := newGitHubRepo(t)
	ta := newGitHubApp(t, g)
	a := ta.proposeIssue("Printer on fire")
	if a.Card.Title != "Create issue in acme/widgets: Printer on fire" || a.Tool != "github_create_issue" {
		t.Fatalf("approval %+v", a)
	}
	if n := len(g.created()); n != 0 {
		t.Fatalf("%d issues before approval", n)
	}
	ta.must(http.StatusOK, "POST", "/v1/approvals/"+a.ID+"/decision", map[string]any{"decision": "approve", "by": "ann"}, nil)
	got := ta.waitApproval(a.ID, engine.ApprovalApplied)
	issues := g.created()
	if len(issues) != 1 || issues[0]["body"] != "Seen on floor 3.\n\n<!-- brain:decision="+got.DecisionID+" -->" {
		t.Fatalf("issues %v (decision %s)", issues, got.DecisionID)
	}
	if !strings.Contains(string(got.Output), `"created":true`) || !strings.Contains(string(got.Output), "/issues/1347") {
		t.Fatalf("output %s", got.Output)
	}

	b := ta.proposeIssue("Not this one")
	ta.must(http.StatusOK, "POST", "/v1/approvals/"+b.ID+"/decision", map[string]any{"decision": "deny", "by": "ann"}, nil)
	if n := len(g.created()); n != 1 {
		t.Fatalf("%d issues after a deny, want 1", n)
	}
	posts := 0
	for _, r := range g.log() {
		if r == "POST /repos/acme/widgets/issues" {
			posts++
		}
	}
	if posts != 1 {
		t.Fatalf("%d issue creations sent, want 1: %q", posts, g.log())
	}
}

// TestGitHub_RetryUnconfirmedFindsTheIssue: GitHub creates the issue but
// the answer is lost, so the approval is unconfirmed; retrying it (same
// decision id) finds the issue by its marker and creates no second one.
func TestGitHub_RetryUnconfirmedFindsTheIssue(t *testing.T) {
	g := newGitHubRepo(t)
	g.dropNext = true
	ta := newGitHubApp(t, g)
	a := ta.proposeIssue("Printer on fire")
	ta.must(http.StatusOK, "POST", "/v1/approvals/"+a.ID+"/decision", map[string]any{"decision": "approve", "by": "ann"}, nil)
	un := ta.waitApproval(a.ID, engine.ApprovalUnconfirmed)
	if len(g.created()) != 1 || !strings.Contains(un.Error, "may have reached GitHub") {
		t.Fatalf("unconfirmed: %q, %d issues", un.Error, len(g.created()))
	}
	ta.must(http.StatusOK, "POST", "/v1/approvals/"+a.ID+"/retry", map[string]any{"by": "ann"}, nil)
	got := ta.waitApproval(a.ID, engine.ApprovalApplied)
	if got.DecisionID != un.DecisionID || !strings.Contains(string(got.Output), `"created":false`) {
		t.Fatalf("retried: %+v, output %s", got, got.Output)
	}
	if n := len(g.created()); n != 1 {
		t.Fatalf("%d issues after the retry, want 1", n)
	}
}

// TestSchedules_GitHubWriteRefused: a scheduled session calling a GitHub
// write tool gets a tool error naming the schedule; nothing reaches
// GitHub, not even the preview's read.
func TestSchedules_GitHubWriteRefused(t *testing.T) {
	loc := paris(t)
	g := newGitHubRepo(t)
	fake := fakemodel.New()
	t.Cleanup(fake.Close)
	poster, posted := recordingPoster()
	clock := newTestClock(time.Date(2026, 6, 1, 2, 0, 0, 0, loc))
	ta := startScheduleApp(t, scheduleApp{
		dir: t.TempDir(), fake: fake, clock: clock, poster: poster,
		edit: func(c *config.Config) {
			c.Agents[0].Tools = []string{"github_create_issue"}
			c.Schedules[0].PostTo.SlackChannel = "C0123456" // validation wants a slack block
		},
	}, fmt.Sprintf(`tools:
  github:
    token: ghp-schedule-test-token-0123456789
    base_url: %s
    repos: [acme/widgets]
schedules:
  - {name: nightly-triage, cron: "0 3 * * *", timezone: Europe/Paris, prompt: File an issue for last night's failures.}
`, g.srv.URL))
	fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "github_create_issue", Input: `{"repo":"acme/widgets","title":"Nightly failures"}`}),
		fakemodel.Text("Nobody could approve the issue."),
	)
	fire := time.Date(2026, 6, 1, 3, 0, 0, 0, loc)
	clock.Set(fire.Add(time.Second))
	ta.tick(fire.Add(time.Second))

	call := waitPost(t, posted)
	_, evs := ta.waitTurns(call.run.SessionID, 1)
	results := 0
	for _, ev := range evs {
		if ev.Type != engine.EventToolResult {
			continue
		}
		results++
		r := payload[engine.ToolCallResult](t, ev)
		if !r.Result.IsError || !strings.Contains(string(ev.Data), `schedule \"nightly-triage\"`) {
			t.Errorf("tool result does not fail naming the schedule: %s", ev.Data)
		}
	}
	if results != 1 || countType(evs, engine.EventApprovalRequested) != 0 {
		t.Fatalf("%d tool results, %d approvals", results, countType(evs, engine.EventApprovalRequested))
	}
	if got := g.log(); len(got) != 0 {
		t.Fatalf("GitHub was called: %q", got)
	}
}
