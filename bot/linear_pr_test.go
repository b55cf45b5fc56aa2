package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"brain/channels/linear/linearfake"
	"brain/engine/model/fakemodel"
	"brain/internal/contracts"
	"brain/internal/gittest"
	"brain/tools/sandbox"
)

// pullsFake is GitHub's pull request list and create for one repository,
// checked against GitHub's published description.
type pullsFake struct {
	mu    sync.Mutex
	pulls []map[string]any
}

func newPullsFake(t *testing.T) (*pullsFake, string) {
	t.Helper()
	f := &pullsFake{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/acme/widgets/pulls", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		out := []any{}
		for _, p := range f.pulls {
			if h := r.URL.Query().Get("head"); h == "" || h == p["head"].(map[string]any)["label"] {
				out = append(out, p)
			}
		}
		f.mu.Unlock()
		writeGitHub(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST /repos/acme/widgets/pulls", func(w http.ResponseWriter, r *http.Request) {
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
		f.mu.Unlock()
		writeGitHub(w, http.StatusCreated, p)
	})
	var violations []string
	var vmu sync.Mutex
	srv := httptest.NewServer(contracts.LoadGitHub(t).Checked(mux, func(v string) {
		vmu.Lock()
		defer vmu.Unlock()
		violations = append(violations, v)
	}, nil))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		vmu.Lock()
		defer vmu.Unlock()
		for _, v := range violations {
			t.Error(v)
		}
	})
	return f, srv.URL + "/"
}

func (f *pullsFake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pulls)
}

// planCall is a plan tool call with the coding steps, those before done
// completed, done itself in progress and the rest pending.
func planCall(done int) fakemodel.Call {
	var steps []map[string]string
	for i, s := range []string{"Clone acme/widgets", "Change the greeting", "Run the tests", "Propose the change", "Review"} {
		st := "pending"
		switch {
		case i < done:
			st = "completed"
		case i == done:
			st = "inProgress"
		}
		steps = append(steps, map[string]string{"content": s, "status": st})
	}
	raw, _ := json.Marshal(map[string]any{"steps": steps})
	return fakemodel.Call{Name: "plan", Input: string(raw)}
}

// TestLinear_DelegatedIssueEndsInAPullRequest: an issue delegated to the
// agent, which plans, changes the repository in its sandbox, commits and
// proposes the change; approved in Linear, brain pushes one branch, opens
// one pull request, attaches it to the issue and moves the issue to the
// review state looked up in its team. The attachment's answer is lost
// once: the retry updates the same attachment, so the issue has one.
func TestLinear_DelegatedIssueEndsInAPullRequest(t *testing.T) {
	if os.Getenv("BRAIN_SKIP_BWRAP") == "1" {
		t.Skip("BRAIN_SKIP_BWRAP=1")
	}
	git := gittest.New(t, "ghs_read_linear", "ghs_write_linear_0123456789")
	git.Create(t, "acme/widgets", map[string]string{
		"widgets.go": "package widgets\n\nfunc Greeting() string { return \"hi\" }\n",
	})
	pulls, ghURL := newPullsFake(t)
	more := fmt.Sprintf("tools:\n  sandbox_exec: {timeout_seconds: 60}\n  github: {token: %s, base_url: %s, git_url: %s, repos: [acme/*]}\n",
		git.WriteToken, ghURL, git.URL)
	la := newLinearAppTools(t, "plan, sandbox_exec, github_propose_change", "", ", review_state: In Review", more)
	la.linear.AddTeam("team-eng",
		linearfake.WorkflowState{ID: "st-todo", Name: "Todo", Type: "unstarted", Position: 0},
		linearfake.WorkflowState{ID: "st-progress", Name: "In Progress", Type: "started", Position: 1},
		linearfake.WorkflowState{ID: "st-review", Name: "In Review", Type: "started", Position: 2},
		linearfake.WorkflowState{ID: "st-done", Name: "Done", Type: "completed", Position: 3})
	la.linear.AddIssue(linearfake.Issue{ID: "i-1", Identifier: "ENG-1", StateID: "st-progress", StateType: "started",
		DelegateID: "app-user", Team: "team-eng", Sessions: []string{sidA}})
	la.linear.Inject(1, linearfake.Fault{Op: "attachmentCreate", Status: http.StatusBadGateway, Message: "bad gateway", AfterApply: true})

	cloned := make(chan error, 1)
	clone := fakemodel.Func(func(fakemodel.Request) fakemodel.Step {
		// The clone through the sandbox's proxy with a brokered token is
		// TestServe_ProposeChangeEndToEnd's; here it lands in the
		// workspace from the host.
		cloned <- cloneInto(la, git)
		return fakemodel.ToolCalls(planCall(1), fakemodel.Call{Name: "sandbox_exec", Input: `{"command":"set -e; cd widgets; ` +
			`sed -i 's/\"hi\"/\"hello\"/' widgets.go; grep -q hello widgets.go; ` +
			`git -c user.name=agent -c user.email=agent@example.com commit -qam 'Say hello'"}`})
	})
	la.fake.Push(
		fakemodel.ToolCalls(planCall(0)),
		clone,
		fakemodel.ToolCalls(planCall(3), fakemodel.Call{Name: "github_propose_change",
			Input: `{"repo":"acme/widgets","path":"/workspace/widgets","base":"main","title":"Say hello","body":"Fixes ENG-1."}`}),
		fakemodel.ToolCalls(planCall(4)),
		fakemodel.Text("Opened the pull request; ENG-1 is in review."),
	)
	la.event("created", sidA, "@brain make the greeting say hello", "")
	el := la.waitActivity(sidA, "elicitation", "Propose a pull request to acme/widgets")
	if err := <-cloned; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(el.Body, "widgets.go") {
		t.Fatalf("the approval does not show the diff: %s", el.Body)
	}
	var meta struct {
		Options []struct{ Value, Label string }
	}
	_ = json.Unmarshal(el.SignalMetadata, &meta)
	la.event("prompted", sidA, meta.Options[0].Value, "") // approve
	la.waitActivity(sidA, "thought", "Moved ENG-1 to In Review.")
	la.waitActivity(sidA, "response", "ENG-1 is in review")

	atts := la.linear.Attachments("i-1")
	if len(atts) != 1 || atts[0].URL != "https://github.com/acme/widgets/pull/1" || atts[0].Title != "Pull request acme/widgets#1" || atts[0].Writes != 2 {
		t.Fatalf("attachments %+v, want the one pull request written twice (a lost answer, then its retry)", atts)
	}
	if is, _ := la.linear.Issue("i-1"); is.StateID != "st-review" {
		t.Fatalf("issue state %s, want st-review", is.StateID)
	}
	pushes := 0
	for _, q := range git.Requests() {
		if strings.HasPrefix(q, "POST /acme/widgets.git/git-receive-pack") {
			pushes++
		}
	}
	if pushes != 1 || pulls.count() != 1 {
		t.Fatalf("%d pushes, %d pull requests", pushes, pulls.count())
	}
	var last, links string
	for _, u := range la.linear.SessionUpdates(sidA) {
		if strings.Contains(string(u.Input), `"plan"`) {
			last = string(u.Input)
		}
		if strings.Contains(string(u.Input), `"addedExternalUrls"`) {
			links += string(u.Input)
		}
	}
	if !strings.Contains(last, `{"content":"Propose the change","status":"completed"}`) || !strings.Contains(last, `{"content":"Review","status":"inProgress"}`) {
		t.Fatalf("last plan %s", last)
	}
	if !strings.Contains(links, `{"label":"Pull request","url":"https://github.com/acme/widgets/pull/1"}`) {
		t.Fatalf("the pull request is not among the session's links: %s", links)
	}
}

// cloneInto clones acme/widgets into the Linear session's workspace.
func cloneInto(la *linearApp, git *gittest.Server) error {
	s, err := la.app.store.SessionByThread(context.Background(), "linear:"+sidA)
	if err != nil {
		return err
	}
	ws := sandbox.WorkspaceDir(filepath.Join(la.app.cfg.DataDir, "sandboxes"), s.ID)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return err
	}
	u := strings.Replace(git.URL, "http://", "http://x:"+git.ReadToken+"@", 1) + "/acme/widgets.git"
	out, err := gitCmd(ws, "clone", "-q", u, "widgets")
	if err != nil {
		return fmt.Errorf("clone: %v: %s", err, out)
	}
	// The remote must not hold the token (the sandbox would see it).
	if out, err := gitCmd(filepath.Join(ws, "widgets"), "remote", "set-url", "origin", "https://github.com/acme/widgets.git"); err != nil {
		return fmt.Errorf("set-url: %v: %s", err, out)
	}
	return nil
}

// gitCmd runs git in dir without user or system config; safe off the
// test's goroutine.
func gitCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	return cmd.CombinedOutput()
}
