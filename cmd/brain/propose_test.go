package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/internal/contracts"
	"brain/internal/gittest"
)

// fakePulls is GitHub's pull request list and create, checked against
// GitHub's published description. The first create is made and then its
// answer held until the caller goes away (brain is killed).
type fakePulls struct {
	mu         sync.Mutex
	pulls      []map[string]any
	violations []string
	holdFirst  bool
	reached    chan struct{}
}

func newFakePulls(t *testing.T) (*fakePulls, string) {
	t.Helper()
	f := &fakePulls{reached: make(chan struct{}, 1), holdFirst: true}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		out := []any{}
		for _, p := range f.pulls {
			if h := r.URL.Query().Get("head"); h == "" || h == "acme:"+p["head"].(map[string]any)["ref"].(string) {
				out = append(out, p)
			}
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /repos/{owner}/{repo}/pulls", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Title, Head, Base, Body string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		n := len(f.pulls) + 1
		p := map[string]any{
			"number": n, "title": in.Title, "body": in.Body, "state": "open",
			"html_url": fmt.Sprintf("https://github.com/acme/widgets/pull/%d", n),
			"head":     map[string]any{"ref": in.Head, "label": "acme:" + in.Head},
			"base":     map[string]any{"ref": in.Base, "label": "acme:" + in.Base},
		}
		f.pulls = append(f.pulls, p)
		hold := f.holdFirst
		f.holdFirst = false
		f.mu.Unlock()
		if hold {
			// Made, and its answer never sent: the connection stays
			// open, unanswered, until brain is killed.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				panic(err)
			}
			f.reached <- struct{}{}
			buf := make([]byte, 1)
			_, _ = conn.Read(buf) // returns when brain dies
			conn.Close()
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(p)
	})
	api := contracts.LoadGitHub(t).Checked(mux, func(v string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.violations = append(f.violations, v)
	}, nil)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		for _, v := range f.violations {
			t.Error(v)
		}
	})
	return f, srv.URL + "/"
}

func (f *fakePulls) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pulls)
}

// TestServe_ProposeChangeEndToEnd: through `brain serve`, the scripted
// model clones a private repository through the sandbox's proxy with a
// brokered token, edits a file, runs go test, commits, and proposes the
// change; the card shows the diff; once approved, brain is SIGKILLed
// while the pull request's answer is on its way; after the restart the
// approval is unconfirmed, and a retry finds the branch and the pull
// request: one push and one pull request in all.
func TestServe_ProposeChangeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in a sandbox: a cold build of the standard library")
	}
	goBin := "/usr/local/go/bin/go"
	if _, err := os.Stat(goBin); err != nil {
		t.Skip("no Go toolchain under /usr/local/go")
	}
	git := gittest.New(t, "ghs_read_e2e", "ghs_write_e2e_0123456789")
	git.Create(t, "acme/widgets", map[string]string{
		"go.mod":          "module example.com/widgets\n\ngo 1.21\n",
		"widgets.go":      "package widgets\n\nfunc Greeting() string { return \"hi\" }\n",
		"widgets_test.go": "package widgets\n\nimport \"testing\"\n\nfunc TestGreeting(t *testing.T) {\n\tif Greeting() == \"\" {\n\t\tt.Fatal(\"empty\")\n\t}\n}\n",
	})
	pulls, ghURL := newFakePulls(t)
	fake := fakemodel.New()
	defer fake.Close()
	dir := t.TempDir()
	addr := freeAddr(t)
	gitAddr := strings.TrimPrefix(git.URL, "http://")
	cfg := fmt.Sprintf(`listen: %s
data_dir: %s
models:
  default: {provider: anthropic, model: claude-test, base_url: %s, api_key: test-key, max_retries: 0}
agents:
  - name: default
    instructions: You are a test agent.
    tools: [sandbox_exec, github_propose_change]
    max_tool_iterations: 5
tools:
  sandbox_exec:
    network: proxy
    timeout_seconds: 1200
    egress:
      allow: []
      private_ok: [%q]
      git_hosts: {github.com: %q}
  github:
    token: %s
    base_url: %s
    git_url: %s
    repos: [acme/*]
`, addr, filepath.Join(dir, "data"), fake.URL(), gitAddr, git.URL, git.WriteToken, ghURL, git.URL)
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, config, addr)

	work := "set -e; export GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off; " +
		"git clone -q https://github.com/acme/widgets.git; cd widgets; " +
		"sed -i 's/\"hi\"/\"hello\"/' widgets.go; " + goBin + " test ./...; " +
		"git -c user.name=agent -c user.email=agent@example.com commit -qam 'Say hello'; git rev-parse HEAD"
	fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "sandbox_exec", Input: mustJSON(t, map[string]any{"command": work, "timeoutSeconds": 1200})}),
		fakemodel.ToolCalls(fakemodel.Call{Name: "github_propose_change",
			Input: `{"repo":"acme/widgets","path":"/workspace/widgets","base":"main","title":"Say hello","body":"Greets properly."}`}),
		fakemodel.Text("I proposed the change."),
	)
	var s apiSession
	if st := d.post("/v1/sessions", map[string]any{"message": "make it say hello"}, &s); st != 201 {
		t.Fatalf("create: %d", st)
	}
	d.waitTurnsDone(s.ID, 1)
	var list struct{ Approvals []engine.Approval }
	d.get("/v1/approvals?status=pending&session_id="+s.ID, &list)
	if len(list.Approvals) != 1 {
		for _, ev := range d.events(s.ID) {
			t.Logf("%s %s", ev.Type, ev.Data)
		}
		t.Fatalf("pending approvals %+v", list.Approvals)
	}
	a := list.Approvals[0]
	facts := map[string]string{}
	for _, f := range a.Card.Facts {
		facts[f.Label] = f.Value
	}
	if !strings.Contains(facts["widgets.go (+1 −1)"], `+func Greeting() string { return "hello" }`) ||
		!strings.Contains(a.Card.Detail, "diff --git a/widgets.go b/widgets.go") || !strings.HasPrefix(facts["Commits"], "1: ") {
		t.Fatalf("card %+v", a.Card)
	}
	for _, q := range git.Requests() {
		if strings.Contains(q, "git-receive-pack") {
			t.Fatalf("something pushed before the approval: %q", q)
		}
	}

	if st := d.post("/v1/approvals/"+a.ID+"/decision", map[string]any{"decision": "approve", "by": "ann"}, nil); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	<-pulls.reached
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()

	d = startDaemon(t, config, addr)
	d.waitApproval(a.ID, engine.ApprovalUnconfirmed)
	if st := d.post("/v1/approvals/"+a.ID+"/retry", map[string]any{"by": "ann"}, nil); st != 200 {
		t.Fatalf("retry: %d", st)
	}
	done := d.waitApproval(a.ID, engine.ApprovalApplied)
	var out map[string]any
	_ = json.Unmarshal(done.Output, &out)
	if out["created"] != false || out["pushed"] != false || out["branch"] != "brain/"+done.DecisionID {
		t.Fatalf("retry output %s", done.Output)
	}
	pushes := 0
	for _, q := range git.Requests() {
		if strings.HasPrefix(q, "POST /acme/widgets.git/git-receive-pack") {
			pushes++
		}
	}
	if pushes != 1 || pulls.count() != 1 {
		t.Fatalf("%d pushes and %d pull requests, want one of each", pushes, pulls.count())
	}
	head, err := os.ReadFile(filepath.Join(git.Root, "acme/widgets.git/refs/heads", out["branch"].(string)))
	if err != nil || strings.TrimSpace(string(head)) != a.Card.Found["head"] {
		t.Fatalf("branch at %q (%v), want %s", head, err, a.Card.Found["head"])
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitTurnsDone waits until the session has completed n turns.
func (d *daemon) waitTurnsDone(id string, n int) {
	d.t.Helper()
	deadline := time.Now().Add(20 * time.Minute) // a cold go test on a small machine
	for countTypes(d.events(id), "turn.completed") < n {
		if time.Now().After(deadline) {
			d.t.Fatalf("session %s: %d turns did not complete\n%s", id, n, d.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
