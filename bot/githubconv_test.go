package bot

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/internal/contracts"
	"brain/tools"
	"brain/webhooks/githubhook"
)

const (
	ghSecret = "github-webhook-secret"
	ghToken  = "ghs_conversationtesttoken000000000000000"
	ghLogin  = "brainy" // the app's login: a user account here, so only Self stops its own comments
	ghThread = "github:acme/widgets#12"
)

// ghComment is one comment of the fake GitHub, with every body it had.
type ghComment struct {
	ID     int64
	Issue  int
	Bodies []string
}

// ghFake is a GitHub REST API for conversations: comments (create and
// edit), reactions, collaborator permissions, pull request files. The real
// go-github v62 client speaks to it.
type ghFake struct {
	srv *httptest.Server

	mu        sync.Mutex
	comments  []*ghComment
	reactions []string // "<comment id>:<content>"
	perms     map[string]string
	auths     []string
	requests  int
	minted    int // installation tokens minted
}

func newGHFake(t *testing.T) *ghFake {
	g := &ghFake{perms: map[string]string{"alice": "write", "mallory": "read"}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /repos/acme/widgets/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Body string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		n, _ := strconv.Atoi(r.PathValue("n"))
		g.mu.Lock()
		c := &ghComment{ID: int64(9000 + len(g.comments)), Issue: n, Bodies: []string{in.Body}}
		g.comments = append(g.comments, c)
		g.mu.Unlock()
		writeGitHub(w, http.StatusCreated, map[string]any{"id": c.ID, "body": in.Body, "user": map[string]any{"login": ghLogin}})
	})
	mux.HandleFunc("PATCH /repos/acme/widgets/issues/comments/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Body string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, c := range g.comments {
			if c.ID == id {
				c.Bodies = append(c.Bodies, in.Body)
				writeGitHub(w, http.StatusOK, map[string]any{"id": id, "body": in.Body})
				return
			}
		}
		writeGitHub(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	})
	// Reactions are recorded as "<target>:<content>": a comment's id, or
	// issueN / reviewID for the issue itself and review comments.
	react := func(target func(*http.Request) string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var in struct{ Content string }
			_ = json.NewDecoder(r.Body).Decode(&in)
			g.mu.Lock()
			g.reactions = append(g.reactions, target(r)+":"+in.Content)
			g.mu.Unlock()
			writeGitHub(w, http.StatusCreated, map[string]any{"id": 1, "content": in.Content})
		}
	}
	mux.HandleFunc("POST /repos/acme/widgets/issues/comments/{id}/reactions", react(func(r *http.Request) string { return r.PathValue("id") }))
	mux.HandleFunc("POST /repos/acme/widgets/issues/{n}/reactions", react(func(r *http.Request) string { return "issue" + r.PathValue("n") }))
	mux.HandleFunc("POST /repos/acme/widgets/pulls/comments/{id}/reactions", react(func(r *http.Request) string { return "review" + r.PathValue("id") }))
	mux.HandleFunc("GET /repos/acme/widgets/pulls/{n}/files", func(w http.ResponseWriter, r *http.Request) {
		file := func(name string) map[string]any {
			return map[string]any{"sha": "bbcd538c8e72b8c175046e27cc8f907076331401", "filename": name, "status": "modified",
				"additions": 3, "deletions": 1, "changes": 4,
				"blob_url": "https://github.com/acme/widgets/blob/6dcb09b/" + name, "raw_url": "https://github.com/acme/widgets/raw/6dcb09b/" + name,
				"contents_url": "https://api.github.com/repos/acme/widgets/contents/" + name + "?ref=6dcb09b", "patch": "@@ -1 +1 @@"}
		}
		writeGitHub(w, http.StatusOK, []any{file("deploy/steps.go"), file("deploy/steps_test.go")})
	})
	mux.HandleFunc("GET /repos/acme/widgets/collaborators/{login}/permission", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		p, ok := g.perms[r.PathValue("login")]
		g.mu.Unlock()
		if !ok {
			writeGitHub(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
			return
		}
		writeGitHub(w, http.StatusOK, map[string]any{"permission": p, "role_name": p})
	})
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.minted++
		tok := fmt.Sprintf("ghs_installation%024d", g.minted)
		g.mu.Unlock()
		writeGitHub(w, http.StatusCreated, map[string]any{"token": tok, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	})
	mux.HandleFunc("GET /rate_limit", func(w http.ResponseWriter, r *http.Request) {
		writeGitHub(w, http.StatusOK, map[string]any{"resources": map[string]any{}})
	})
	// Every request the go-github client sends, and every answer, is
	// checked against GitHub's published description.
	api := contracts.LoadGitHub(t).Checked(mux, func(v string) { t.Error(v) }, nil)
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.requests++
		g.auths = append(g.auths, r.Header.Get("Authorization"))
		g.mu.Unlock()
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// waitComment waits for a comment one of whose bodies contains want.
func (g *ghFake) waitComment(t *testing.T, want string) ghComment {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		g.mu.Lock()
		for _, c := range g.comments {
			for _, b := range c.Bodies {
				if strings.Contains(b, want) {
					out := *c
					out.Bodies = append([]string(nil), c.Bodies...)
					g.mu.Unlock()
					return out
				}
			}
		}
		all := fmt.Sprint(len(g.comments))
		for _, c := range g.comments {
			all += fmt.Sprintf("\n%d: %q", c.ID, c.Bodies)
		}
		g.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no comment with %q; comments: %s", want, all)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (g *ghFake) reacted(content string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, r := range g.reactions {
		if strings.HasSuffix(r, ":"+content) {
			n++
		}
	}
	return n
}

type ghApp struct {
	*testApp
	gh      *ghFake
	applied atomic.Int64
	nextID  atomic.Int64
	example map[string]any
	// examples are GitHub's example payloads by event, the first whose
	// action is opened or created.
	examples map[string]map[string]any
	last     []byte      // the last comment's payload
	failNext atomic.Bool // the deploy's next apply fails
}

func newGHApp(t *testing.T) *ghApp {
	t.Helper()
	return newGHAppAuth(t, "token: "+ghToken)
}

// newGHAppAuth is newGHApp with auth as the github block's credential
// (token: ..., or app: {...}).
func newGHAppAuth(t *testing.T, auth string) *ghApp {
	t.Helper()
	return newGHAppMore(t, auth, "")
}

// newGHAppMore is newGHAppAuth with top-level YAML added to the config.
func newGHAppMore(t *testing.T, auth, more string) *ghApp {
	t.Helper()
	return newGHAppTools(t, auth, "ask, deploy", more)
}

// newGHAppTools is newGHAppMore with the agent's tools.
func newGHAppTools(t *testing.T, auth, toolList, more string) *ghApp {
	t.Helper()
	ga := &ghApp{gh: newGHFake(t), examples: map[string]map[string]any{}}
	ga.nextID.Store(5000)
	raw, err := os.ReadFile(filepath.Join("..", "webhooks", "githubhook", "testdata", "examples", "node_modules", "@octokit", "webhooks-examples", "api.github.com", "index.json"))
	if err != nil {
		t.Fatalf("GitHub's example payloads are missing (run make test-deps): %v", err)
	}
	var all []struct {
		Name     string           `json:"name"`
		Examples []map[string]any `json:"examples"`
	}
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		if e.Name == "issue_comment" {
			ga.example = e.Examples[0] // action created
		}
		for _, ex := range e.Examples {
			if a, _ := ex["action"].(string); (a == "opened" || a == "created") && ga.examples[e.Name] == nil {
				ga.examples[e.Name] = ex
			}
		}
	}
	deploy := tools.Definition{
		Name: "deploy", Description: "Deploy",
		Input: json.RawMessage(`{"type":"object"}`),
		Preview: func(ctx context.Context, c tools.Call) (tools.Card, error) {
			return tools.Card{Title: "Deploy widgets", Facts: []tools.Fact{{Label: "Env", Value: "prod"}}}, nil
		},
		Apply: func(ctx context.Context, c tools.Call, d tools.Decision) (json.RawMessage, error) {
			if ga.failNext.CompareAndSwap(true, false) {
				return nil, tools.Failed("the deploy service answered 503")
			}
			ga.applied.Add(1)
			return json.RawMessage(`{"ok":true}`), nil
		},
	}
	extra := fmt.Sprintf("    tools: [%s]\ngithub: {webhook_secret: %s, %s, login: %s, base_url: %s}\n", toolList, ghSecret, auth, ghLogin, ga.gh.srv.URL) + more
	ga.testApp = newTestApp(t, extra, Options{Tools: []tools.Definition{deploy}})
	return ga
}

// comment delivers a signed issue_comment.created (GitHub's example
// payload, pointed at acme/widgets#12) by login with body; delivery ""
// makes a fresh delivery id. It returns the status and the delivery id.
func (ga *ghApp) comment(login, body, delivery string, sign func([]byte) string) (int, string) {
	ga.t.Helper()
	var p map[string]any
	b, _ := json.Marshal(ga.example)
	_ = json.Unmarshal(b, &p)
	id := ga.nextID.Add(1)
	p["repository"].(map[string]any)["name"] = "widgets"
	p["repository"].(map[string]any)["owner"].(map[string]any)["login"] = "acme"
	p["issue"].(map[string]any)["number"] = 12
	p["issue"].(map[string]any)["title"] = "Widgets deploy is stuck"
	p["issue"].(map[string]any)["body"] = "The deploy of widgets hangs at step 3."
	c := p["comment"].(map[string]any)
	c["id"], c["body"] = id, body
	c["user"].(map[string]any)["login"] = login
	p["sender"].(map[string]any)["login"] = login
	raw, _ := json.Marshal(p)
	if delivery == "" {
		delivery = fmt.Sprintf("72d3162e-cc78-11e3-81ab-%012d", id)
	}
	ga.last = raw
	return ga.send(raw, delivery, sign), delivery
}

// send posts an issue_comment delivery (sign nil: signed with the
// secret).
func (ga *ghApp) send(raw []byte, delivery string, sign func([]byte) string) int {
	ga.t.Helper()
	return ga.sendEvent("issue_comment", raw, delivery, sign)
}

// sendEvent posts a delivery of event.
func (ga *ghApp) sendEvent(event string, raw []byte, delivery string, sign func([]byte) string) int {
	ga.t.Helper()
	if sign == nil {
		sign = func(b []byte) string { return githubhook.Signature(ghSecret, b) }
	}
	req, _ := http.NewRequest("POST", ga.base+"/github/webhook", bytes.NewReader(raw))
	req.Header.Set(githubhook.HeaderSignature, sign(raw))
	req.Header.Set(githubhook.HeaderDelivery, delivery)
	req.Header.Set(githubhook.HeaderEvent, event)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ga.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (ga *ghApp) session() engine.Session {
	ga.t.Helper()
	s, err := ga.app.store.SessionByThread(context.Background(), ghThread)
	if err != nil {
		ga.t.Fatal(err)
	}
	return s
}

func TestGitHubConv_MentionReactsRepliesByEditAndQuestionByNumber(t *testing.T) {
	ga := newGHApp(t)
	ga.fake.Push(
		fakemodel.TextAndTools("Let me check.", fakemodel.Call{Name: "ask", Input: `{"text":"Which env?","options":[{"label":"Staging","value":"stg"},{"label":"Production","value":"prod"}]}`}),
		fakemodel.Text("Production it is."),
	)
	if st, _ := ga.comment("alice", "@brainy why is the deploy stuck?", "", nil); st != http.StatusOK {
		t.Fatalf("status %d", st)
	}
	q := ga.gh.waitComment(t, "**Question:** Which env?")
	if !strings.Contains(q.Bodies[0], "1. Staging") || !strings.Contains(q.Bodies[0], "2. Production") {
		t.Fatalf("question %q", q.Bodies[0])
	}
	if ga.gh.reacted("eyes") != 1 {
		t.Fatal("the mention got no eyes reaction")
	}
	reply := ga.gh.waitComment(t, "Let me check.")
	// The answer by number, from the session's person, needs no mention.
	ga.comment("alice", "2", "", nil)
	ga.gh.waitComment(t, "Production it is.")
	// The first turn's reply was created with its text, then edited as
	// its tool step arrived.
	reply = ga.gh.waitComment(t, "<details><summary>Tool steps (1)")
	if len(reply.Bodies) < 2 || reply.Bodies[0] != "Let me check." || !strings.Contains(reply.Bodies[len(reply.Bodies)-1], "Let me check.") {
		t.Fatalf("the turn's reply was not edited as it grew: %q", reply.Bodies)
	}
	s := ga.session()
	if s.Origin != "github" || s.StartedBy != "alice" {
		t.Fatalf("session %+v", s)
	}
	reqs := ga.fake.Requests()
	if !strings.Contains(string(reqs[0].Raw), "Widgets deploy is stuck") || !strings.Contains(string(reqs[0].Raw), "content from GitHub") {
		t.Fatal("the issue did not reach the model as content from GitHub")
	}
	if !strings.Contains(string(reqs[len(reqs)-1].Raw), "prod") {
		t.Fatal("the numbered answer did not reach the model as its option")
	}
	for _, a := range ga.gh.auths {
		if a != "Bearer "+ghToken {
			t.Fatalf("authorization %q", a)
		}
	}
}

func TestGitHubConv_ApproveByCommandOnceStrangerRefused(t *testing.T) {
	ga := newGHApp(t)
	ga.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy"}), fakemodel.Text("Proposed the deploy."))
	ga.comment("alice", "@brainy deploy it", "", nil)
	card := ga.gh.waitComment(t, "**Approval needed**")
	if !strings.Contains(card.Bodies[0], "| Env | prod |") || !strings.Contains(card.Bodies[0], "/approve #") || !strings.Contains(card.Bodies[0], "<details>") {
		t.Fatalf("card %q", card.Bodies[0])
	}
	ga.comment("mallory", "/approve", "", nil)
	ga.gh.waitComment(t, "@mallory ")
	if ga.applied.Load() != 0 {
		t.Fatal("a stranger's /approve applied")
	}
	ga.comment("alice", "/approve ship it", "", nil)
	ga.gh.waitComment(t, "Applied.")
	ga.comment("alice", "/approve", "", nil)
	ga.gh.waitComment(t, "No approval is waiting for /approve")
	if ga.applied.Load() != 1 {
		t.Fatalf("applied %d times", ga.applied.Load())
	}
	edited := ga.gh.waitComment(t, "Approved by @alice")
	if edited.ID != card.ID {
		t.Fatal("the decision was not shown on the card")
	}
}

func TestGitHubConv_DenyReasonReachesTheModel(t *testing.T) {
	ga := newGHApp(t)
	ga.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy"}), fakemodel.Text("Waiting for the decision."), fakemodel.Text("Understood, not deploying."))
	ga.comment("alice", "@brainy deploy it", "", nil)
	ga.gh.waitComment(t, "**Approval needed**")
	ga.gh.waitComment(t, "Waiting for the decision.")
	ga.comment("alice", "/deny the freeze is on until Monday", "", nil)
	ga.gh.waitComment(t, "Denied by @alice")
	// The denial reaches the model with the conversation's next turn.
	ga.comment("alice", "@brainy what now?", "", nil)
	ga.gh.waitComment(t, "Understood, not deploying.")
	reqs := ga.fake.Requests()
	if !strings.Contains(string(reqs[len(reqs)-1].Raw), "the freeze is on until Monday") {
		t.Fatal("the denial's reason did not reach the model")
	}
	if ga.applied.Load() != 0 {
		t.Fatal("a denied deploy applied")
	}
}

func TestGitHubConv_RedeliveryOwnCommentAndForgeryStartNothing(t *testing.T) {
	ga := newGHApp(t)
	ga.fake.Push(fakemodel.Text("Hello."))
	if st, _ := ga.comment("alice", "@brainy hi", "", func([]byte) string { return githubhook.Signature("not-the-secret", []byte("x")) }); st != http.StatusUnauthorized {
		t.Fatalf("forged: %d", st)
	}
	if st, _ := ga.comment(ghLogin, "@brainy talk to yourself", "", nil); st != http.StatusOK {
		t.Fatalf("own comment: %d", st)
	}
	st, delivery := ga.comment("alice", "@brainy hi", "", nil)
	if st != http.StatusOK {
		t.Fatalf("status %d", st)
	}
	ga.gh.waitComment(t, "Hello.")
	s := ga.session()
	ga.waitStatus(s.ID, engine.StatusIdle)
	// The same delivery again: answered as a duplicate, nothing starts.
	if st := ga.send(ga.last, delivery, nil); st != http.StatusAccepted {
		t.Fatalf("redelivery: %d", st)
	}
	sessions, err := ga.app.engine.Sessions(context.Background(), engine.SessionFilter{})
	if err != nil || len(sessions) != 1 {
		t.Fatalf("%d sessions, %v", len(sessions), err)
	}
	if n := len(ga.fake.Requests()); n != 1 {
		t.Fatalf("%d model requests; the forged, own or redelivered comment started a turn", n)
	}
}

func TestGitHubConv_StrangerToldOnceBotsIgnored(t *testing.T) {
	ga := newGHApp(t)
	ga.comment("mallory", "@brainy deploy everything", "", nil)
	ga.gh.waitComment(t, "@mallory only people allowed")
	ga.comment("mallory", "@brainy please?", "", nil)
	ga.comment("alice", "no mention, people talking", "", nil)
	// A marker after both: the worker takes a thread's items in order.
	ga.fake.Push(fakemodel.Text("Marker."))
	ga.comment("alice", "@brainy marker", "", nil)
	ga.gh.waitComment(t, "Marker.")
	ga.gh.mu.Lock()
	refusals := 0
	for _, c := range ga.gh.comments {
		if strings.Contains(c.Bodies[0], "@mallory") {
			refusals++
		}
	}
	ga.gh.mu.Unlock()
	if refusals != 1 {
		t.Fatalf("%d refusals; want one per conversation", refusals)
	}
	if n := len(ga.fake.Requests()); n != 1 {
		t.Fatalf("%d model requests; only alice's mention may start a turn", n)
	}
	if s := ga.session(); s.StartedBy != "alice" {
		t.Fatalf("session started by %q", s.StartedBy)
	}
}

func TestGitHubConv_StopCancelsTheTurn(t *testing.T) {
	ga := newGHApp(t)
	ga.fake.Push(fakemodel.Hold())
	ga.comment("alice", "@brainy long job", "", nil)
	if _, err := ga.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ga.comment("mallory", "/stop", "", nil)
	ga.gh.waitComment(t, "@mallory only the person who started this session")
	ga.comment("alice", "/stop", "", nil)
	s := ga.session()
	_, evs := ga.waitTurns(s.ID, 1)
	cancelled := false
	for _, ev := range evs {
		if ev.Type == engine.EventTurnCompleted && strings.Contains(string(ev.Data), "cancelled") {
			cancelled = true
		}
	}
	if !cancelled {
		t.Fatal("/stop did not cancel the turn")
	}
}

// pullRequestEvent is GitHub's example payload of event, pointed at
// acme/widgets#12 as a pull request, by login, with the text given (the
// pull request's body for pull_request, the comment's otherwise).
func (ga *ghApp) pullRequestEvent(event, login, text string) []byte {
	ga.t.Helper()
	ex := ga.examples[event]
	if ex == nil {
		ga.t.Fatalf("GitHub's examples have no %s payload", event)
	}
	var p map[string]any
	b, _ := json.Marshal(ex)
	_ = json.Unmarshal(b, &p)
	p["repository"].(map[string]any)["name"] = "widgets"
	p["repository"].(map[string]any)["owner"].(map[string]any)["login"] = "acme"
	pr := p["pull_request"].(map[string]any)
	pr["number"], pr["title"] = 12, "Retry step 3 of the widgets deploy"
	pr["user"].(map[string]any)["login"] = login
	p["sender"].(map[string]any)["login"] = login
	if event == "pull_request" {
		pr["body"] = text
	} else {
		c := p["comment"].(map[string]any)
		c["id"], c["body"], c["path"] = ga.nextID.Add(1), text, "deploy/steps.go"
		c["user"].(map[string]any)["login"] = login
	}
	raw, _ := json.Marshal(p)
	return raw
}

// TestGitHubConv_PullRequestOpenedAndReviewComment: a pull request opened
// with a mention starts a session whose context names the changed files
// (read from GitHub), a review comment on a line continues it, and both
// get their reaction where GitHub shows them.
func TestGitHubConv_PullRequestOpenedAndReviewComment(t *testing.T) {
	ga := newGHApp(t)
	ga.fake.Push(fakemodel.Text("The change retries step 3; it looks right."), fakemodel.Text("Line 40 should back off."))
	raw := ga.pullRequestEvent("pull_request", "alice", "@brainy please review this")
	if code := ga.sendEvent("pull_request", raw, "", nil); code != http.StatusOK {
		t.Fatalf("pull_request delivery = %d", code)
	}
	ga.gh.waitComment(t, "it looks right")
	s := ga.session()
	if s.StartedBy != "alice" {
		t.Fatalf("session %+v", s)
	}
	var context string
	for _, ev := range ga.events(s.ID) {
		if ev.Type == engine.EventSessionContext {
			context = string(ev.Data)
		}
	}
	if !strings.Contains(context, "pull request") || !strings.Contains(context, "deploy/steps_test.go") || !strings.Contains(context, "Retry step 3") {
		t.Fatalf("session context %s", context)
	}
	raw = ga.pullRequestEvent("pull_request_review_comment", "alice", "@brainy what about this line?")
	if code := ga.sendEvent("pull_request_review_comment", raw, "", nil); code != http.StatusOK {
		t.Fatalf("review comment delivery = %d", code)
	}
	ga.gh.waitComment(t, "Line 40 should back off")
	if got := ga.session(); got.ID != s.ID {
		t.Fatalf("the review comment started session %s beside %s", got.ID, s.ID)
	}
	ga.gh.mu.Lock()
	reactions := strings.Join(ga.gh.reactions, " ")
	ga.gh.mu.Unlock()
	if !strings.Contains(reactions, "issue12:eyes") || !strings.Contains(reactions, "review") {
		t.Fatalf("reactions %s; want one on the pull request and one on the review comment", reactions)
	}
}

// TestGitHubConv_RetryAfterAFailedApply: an apply that fails says so on
// the card with the /retry command; a stranger's /retry is refused and
// runs nothing, and the approver's runs it once more.
func TestGitHubConv_RetryAfterAFailedApply(t *testing.T) {
	ga := newGHApp(t)
	ga.failNext.Store(true)
	ga.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy"}), fakemodel.Text("Proposed the deploy."))
	ga.comment("alice", "@brainy deploy it", "", nil)
	ga.gh.waitComment(t, "**Approval needed**")
	ga.comment("alice", "/approve", "", nil)
	failed := ga.gh.waitComment(t, "Apply failed")
	last := failed.Bodies[len(failed.Bodies)-1]
	_, after, ok := strings.Cut(last, "`/retry ")
	short, _, ok2 := strings.Cut(after, "`")
	if !ok || !ok2 || ga.applied.Load() != 0 {
		t.Fatalf("card after the failure %q (applied %d)", last, ga.applied.Load())
	}
	ga.comment("mallory", "/retry "+short, "", nil)
	ga.gh.waitComment(t, "@mallory ")
	if n := ga.applied.Load(); n != 0 {
		t.Fatalf("a stranger's /retry applied (%d)", n)
	}
	ga.comment("alice", "/retry "+short, "", nil)
	ga.gh.waitComment(t, "Applied.")
	if n := ga.applied.Load(); n != 1 {
		t.Fatalf("applied %d times after /retry", n)
	}
}

// TestGitHubConv_AsAGitHubApp: with github.app the conversation is served
// as the App's installation: a JWT mints an installation token once, and
// every comment is posted with that token, never with the JWT.
func TestGitHubConv_AsAGitHubApp(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyFile, pemKey, 0o600); err != nil {
		t.Fatal(err)
	}
	ga := newGHAppAuth(t, fmt.Sprintf("app: {app_id: 42, installation_id: 7, private_key_file: %s}", keyFile))
	ga.fake.Push(fakemodel.Text("Step 3 waits on a lock."), fakemodel.Text("The lock is held by run 41."))
	ga.comment("alice", "@brainy why is it stuck?", "", nil)
	ga.gh.waitComment(t, "waits on a lock")
	ga.comment("alice", "@brainy who holds it?", "", nil)
	ga.gh.waitComment(t, "held by run 41")

	ga.gh.mu.Lock()
	defer ga.gh.mu.Unlock()
	if ga.gh.minted != 1 {
		t.Fatalf("%d installation tokens minted; want 1, cached for the second turn", ga.gh.minted)
	}
	jwts, installs := 0, 0
	for _, a := range ga.gh.auths {
		switch {
		case strings.HasPrefix(a, "Bearer eyJ"):
			jwts++
		case a == "Bearer ghs_installation000000000000000000000001":
			installs++
		case strings.Contains(a, ghToken):
			t.Fatalf("the token of the token config was sent: %q", a)
		}
	}
	if jwts != 1 || installs < 4 {
		t.Fatalf("auth headers %q: want one JWT (the mint) and the installation token on every call", ga.gh.auths)
	}
}
