package github

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"brain/tools"
	"brain/tools/toolstest"
)

const decision = "dec_019a2b3c4d5e6f70a1b2c3d4e5f6"

func (fm family) preview(t *testing.T, name, input string) (tools.Card, error) {
	t.Helper()
	tool := fm[name]
	if tool == nil || !tool.NeedsApproval() {
		t.Fatalf("no approval tool %s", name)
	}
	if err := tool.ValidateInput(json.RawMessage(input)); err != nil {
		t.Fatalf("%s: input %s: %v", name, input, err)
	}
	return tool.Preview(context.Background(), tools.Call{Input: json.RawMessage(input), SessionID: "s1", ToolCallID: "c1"})
}

func (fm family) apply(t *testing.T, name, input, decisionID string) (map[string]any, error) {
	t.Helper()
	raw, err := fm[name].Apply(context.Background(), tools.Call{Input: json.RawMessage(input), SessionID: "s1", ToolCallID: "c1"},
		tools.Decision{ID: decisionID, By: "ann"})
	if err != nil {
		return nil, err
	}
	return decode(t, raw), nil
}

func facts(c tools.Card) map[string]string {
	out := map[string]string{}
	for _, f := range c.Facts {
		out[f.Label] = f.Value
	}
	return out
}

func TestCreateIssue_PreviewWritesNothingApplyCreatesOneWithTheMarker(t *testing.T) {
	f := newFakeGitHub(t)
	fm := newFamily(t, f)
	input := `{"repo":"acme/widgets","title":"Printer on fire","body":"Smoke from tray 2.","labels":["bug","p1"]}`
	card, err := fm.preview(t, "github_create_issue", input)
	if err != nil {
		t.Fatal(err)
	}
	if card.Title != "Create issue in acme/widgets: Printer on fire" || facts(card)["Labels"] != "bug, p1" ||
		facts(card)["Body"] != "Smoke from tray 2." || facts(card)["Repository"] != "acme/widgets" {
		t.Fatalf("card %+v", card)
	}
	if got := f.log(); len(got) != 1 || got[0] != "GET /repos/acme/widgets" {
		t.Fatalf("preview requests %q", got)
	}

	out, err := fm.apply(t, "github_create_issue", input, decision)
	if err != nil {
		t.Fatal(err)
	}
	issues := f.issues("acme/widgets")
	if len(issues) != 1 || f.writes() != 1 {
		t.Fatalf("%d issues, %d writes", len(issues), f.writes())
	}
	i := issues[0]
	if i.body != "Smoke from tray 2.\n\n<!-- brain:decision="+decision+" -->" || i.title != "Printer on fire" || str(i.labels) != "[bug p1]" {
		t.Fatalf("created %+v", i)
	}
	if out["created"] != true || out["number"] != float64(i.number) || out["url"] == "" {
		t.Fatalf("result %v", out)
	}
	want := []string{
		"GET /repos/acme/widgets",
		"GET /repos/acme/widgets/issues?direction=desc&per_page=100&sort=created&state=all",
		"POST /repos/acme/widgets/issues",
	}
	if got := f.log(); str(got) != str(want) {
		t.Fatalf("requests %q, want %q", got, want)
	}

	// A marker the model wrote itself is not taken for the decision's.
	_, err = fm.apply(t, "github_create_issue", `{"repo":"acme/widgets","title":"Copy","body":"x <!-- brain:decision=dec_other -->"}`, "dec_2")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.issues("acme/widgets")[1].body; got != "x\n\n<!-- brain:decision=dec_2 -->" {
		t.Fatalf("body %q", got)
	}
}

// TestApply_RetryAfterLostAnswerFindsTheMarker: GitHub does the write and
// the connection drops before the answer: the outcome is unknown. The
// person retries the unconfirmed approval (same decision id): the apply
// finds the item by its marker and creates nothing.
func TestApply_RetryAfterLostAnswerFindsTheMarker(t *testing.T) {
	tests := []struct {
		tool, input string
		setup       func(f *fakeGitHub)
		count       func(f *fakeGitHub) int
	}{
		{
			tool:  "github_create_issue",
			input: `{"repo":"acme/widgets","title":"Printer on fire"}`,
			count: func(f *fakeGitHub) int { return len(f.issues("acme/widgets")) },
		},
		{
			tool:  "github_comment",
			input: `{"repo":"acme/widgets","number":7,"body":"Fixed in 1.2."}`,
			setup: func(f *fakeGitHub) {
				i := f.seed("acme/widgets", fakeIssue{number: 7, title: "Paper jam"})
				for n := range 130 { // the marker lands past the first pages
					i.comments = append(i.comments, fakeComment{id: int64(n), body: "+1", at: i.created})
				}
			},
			count: func(f *fakeGitHub) int { return len(f.issues("acme/widgets")[0].comments) - 130 },
		},
		{
			tool:  "github_create_pull_request",
			input: `{"repo":"acme/widgets","head":"topic","base":"main","title":"Add tests"}`,
			count: func(f *fakeGitHub) int { return len(f.issues("acme/widgets")) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			f := newFakeGitHub(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			fm := newFamily(t, f)
			f.mu.Lock()
			f.dropNext = true
			f.mu.Unlock()
			_, err := fm.apply(t, tt.tool, tt.input, decision)
			toolstest.ToolError(t, err, true, "after the request was sent")
			if n := tt.count(f); n != 1 {
				t.Fatalf("%d created by the lost apply, want 1", n)
			}

			out, err := fm.apply(t, tt.tool, tt.input, decision)
			if err != nil {
				t.Fatal(err)
			}
			if out["created"] != false || !strings.Contains(str(out["note"]), "already created it") || out["url"] == "" {
				t.Fatalf("retry result %v", out)
			}
			if n, w := tt.count(f), f.writes(); n != 1 || w != 1 {
				t.Fatalf("after the retry: %d created, %d writes; want 1 and 1", n, w)
			}

			// Another decision is another write.
			if _, err := fm.apply(t, tt.tool, tt.input, "dec_other"); err != nil {
				t.Fatal(err)
			}
			if n := tt.count(f); n != 2 {
				t.Fatalf("another decision: %d created, want 2", n)
			}
		})
	}
}

func TestCreatePullRequest_PreviewShowsCommitsAhead(t *testing.T) {
	f := newFakeGitHub(t)
	fm := newFamily(t, f)
	card, err := fm.preview(t, "github_create_pull_request", `{"repo":"octocat/Hello-World","head":"topic","base":"master","title":"Add tests","draft":true}`)
	if err != nil {
		t.Fatal(err)
	}
	fs := facts(card)
	if card.Title != "Open pull request in octocat/Hello-World: Add tests" || fs["Branches"] != "topic → master" ||
		fs["Commits ahead"] != "2: 6dcb09b Fix all the bugs; 0328041 Add tests" || fs["Draft"] != "yes" || fs["Files changed"] != "1" {
		t.Fatalf("card %+v", card)
	}
	if got := f.log(); len(got) != 1 || got[0] != "GET /repos/octocat/Hello-World/compare/master...topic?per_page=100" {
		t.Fatalf("requests %q", got)
	}
	out, err := fm.apply(t, "github_create_pull_request", `{"repo":"octocat/Hello-World","head":"topic","base":"master","title":"Add tests","body":"Adds tests.","draft":true}`, decision)
	if err != nil {
		t.Fatal(err)
	}
	prs := f.issues("octocat/Hello-World")
	if out["created"] != true || len(prs) != 1 || !prs[0].pull || prs[0].body != "Adds tests.\n\n<!-- brain:decision="+decision+" -->" {
		t.Fatalf("result %v, pull requests %+v", out, prs)
	}
	if got := f.log(); got[1] != "GET /repos/octocat/Hello-World/pulls?base=master&head=octocat%3Atopic&per_page=100&state=all" {
		t.Fatalf("marker lookup %q", got[1])
	}
}

func TestAddLabelsAndClose_IdempotentAndSaySo(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("acme/widgets", fakeIssue{number: 7, title: "Paper jam", labels: []string{"bug"}})
	fm := newFamily(t, f)
	card, err := fm.preview(t, "github_add_labels", `{"repo":"acme/widgets","number":7,"labels":["p1","bug"]}`)
	if err != nil || card.Title != "Add labels to acme/widgets#7" || facts(card)["Has now"] != "bug" || facts(card)["On"] != "#7 Paper jam (issue, open)" {
		t.Fatalf("card %+v, %v", card, err)
	}
	for range 2 {
		out, err := fm.apply(t, "github_add_labels", `{"repo":"acme/widgets","number":7,"labels":["p1","bug"]}`, decision)
		if err != nil {
			t.Fatal(err)
		}
		if str(out["labels"]) != "[bug p1]" || !strings.Contains(str(out["note"]), "idempotent") {
			t.Fatalf("labels result %v", out)
		}
	}
	card, err = fm.preview(t, "github_close_issue", `{"repo":"acme/widgets","number":7,"reason":"not_planned"}`)
	if err != nil || card.Title != "Close acme/widgets#7 as not planned" {
		t.Fatalf("card %+v, %v", card, err)
	}
	for range 2 {
		out, err := fm.apply(t, "github_close_issue", `{"repo":"acme/widgets","number":7,"reason":"not_planned"}`, decision)
		if err != nil {
			t.Fatal(err)
		}
		if out["state"] != "closed" || out["state_reason"] != "not_planned" || !strings.Contains(str(out["note"]), "idempotent") {
			t.Fatalf("close result %v", out)
		}
	}
	if i := f.issues("acme/widgets")[0]; i.state != "closed" || str(i.labels) != "[bug p1]" {
		t.Fatalf("issue %+v", i)
	}
}

func TestComment_Preview(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("octocat/Hello-World", fakeIssue{number: 1347, title: "Amazing new feature", pull: true})
	fm := newFamily(t, f)
	card, err := fm.preview(t, "github_comment", `{"repo":"octocat/Hello-World","number":1347,"body":"LGTM"}`)
	if err != nil {
		t.Fatal(err)
	}
	if card.Title != "Comment on octocat/Hello-World#1347" || facts(card)["On"] != "#1347 Amazing new feature (pull request, open)" || facts(card)["Comment"] != "LGTM" {
		t.Fatalf("card %+v", card)
	}
	if f.writes() != 0 {
		t.Fatal("a preview wrote")
	}
}

// TestAllowList_RefusedBeforeSending: every tool refuses a repository off
// the list with a known outcome and sends nothing.
func TestAllowList_RefusedBeforeSending(t *testing.T) {
	f := newFakeGitHub(t)
	fm := newFamily(t, f)
	inputs := map[string]string{
		"github_get_issue":           `{"repo":"evil/x","number":1}`,
		"github_list_issues":         `{"repo":"evil/x"}`,
		"github_get_pull_request":    `{"repo":"evil/x","number":1}`,
		"github_get_file":            `{"repo":"evil/x","path":"README.md"}`,
		"github_list_commits":        `{"repo":"evil/x"}`,
		"github_get_checks":          `{"repo":"evil/x","ref":"main"}`,
		"github_search_issues":       `{"query":"bug repo:evil/x"}`,
		"github_search_code":         `{"query":"token repo:acme/widgets repo:evil/x"}`,
		"github_create_issue":        `{"repo":"evil/x","title":"t"}`,
		"github_comment":             `{"repo":"evil/x","number":1,"body":"b"}`,
		"github_add_labels":          `{"repo":"evil/x","number":1,"labels":["l"]}`,
		"github_close_issue":         `{"repo":"evil/x","number":1}`,
		"github_create_pull_request": `{"repo":"evil/x","head":"h","base":"b","title":"t"}`,
	}
	if len(inputs) != len(fm) {
		t.Fatalf("%d inputs for %d tools", len(inputs), len(fm))
	}
	for name, input := range inputs {
		tool := fm[name]
		if tool == nil {
			t.Fatalf("no tool %s", name)
		}
		if !tool.NeedsApproval() {
			_, err := fm.run(t, name, input)
			toolstest.ToolError(t, err, false, "nothing was sent")
			continue
		}
		_, err := fm.preview(t, name, input)
		toolstest.ToolError(t, err, false, "evil/x is not in the allow-list", "nothing was sent")
		_, err = fm.apply(t, name, input, decision)
		toolstest.ToolError(t, err, false, "evil/x is not in the allow-list", "nothing was sent")
	}
	// Globs match names, not owners; case is ignored.
	_, err := fm.run(t, "github_list_issues", `{"repo":"acme-evil/widgets"}`)
	toolstest.ToolError(t, err, false, "not in the allow-list")
	if got := f.log(); len(got) != 0 {
		t.Fatalf("requests were sent: %q", got)
	}
	fm.mustRun(t, "github_list_issues", `{"repo":"ACME/Widgets"}`)
}

// TestSecondaryRateLimit_ToolErrorSayingWhenNoRetry: a 403 secondary rate
// limit with Retry-After is a tool error naming when to retry, with a
// known outcome; it is sent once and not retried, and the next call waits
// without sending.
func TestSecondaryRateLimit_ToolErrorSayingWhenNoRetry(t *testing.T) {
	f := newFakeGitHub(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.before = func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost {
			return false
		}
		w.Header().Set("Retry-After", "60")
		writeJSON(w, http.StatusForbidden, map[string]any{
			"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
			"documentation_url": "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
		})
		return true
	}
	fm := newFamily(t, f, func(c *Config) { c.Now = func() time.Time { return now } })
	input := `{"repo":"acme/widgets","title":"Printer on fire"}`
	_, err := fm.apply(t, "github_create_issue", input, decision)
	toolstest.ToolError(t, err, false, "secondary rate limit", "retry after 1m0s, at 2026-03-01T12:01:00Z", "not retried automatically")
	if f.writes() != 1 {
		t.Fatalf("%d POSTs, want exactly 1 (no retry)", f.writes())
	}
	sent := len(f.log())
	_, err = fm.apply(t, "github_create_issue", input, decision)
	toolstest.ToolError(t, err, false, "secondary rate limit", "retry after")
	if len(f.log()) != sent {
		t.Fatalf("sent during the wait: %q", f.log()[sent:])
	}
}

func TestPrimaryRateLimit_SaysWhenItResets(t *testing.T) {
	f := newFakeGitHub(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	reset := now.Add(25 * time.Minute)
	f.before = func(w http.ResponseWriter, r *http.Request) bool {
		h := w.Header()
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", "5000")
		h.Set("X-RateLimit-Reset", str(reset.Unix()))
		h.Set("X-RateLimit-Resource", "core")
		writeJSON(w, http.StatusForbidden, map[string]any{
			"message":           "API rate limit exceeded for user ID 1.",
			"documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting",
		})
		return true
	}
	fm := newFamily(t, f, func(c *Config) { c.Now = func() time.Time { return now } })
	_, err := fm.run(t, "github_get_issue", `{"repo":"acme/widgets","number":1}`)
	toolstest.ToolError(t, err, false, "rate limit", "until 2026-03-01T12:25:00Z (in 25m0s)", "not retried automatically")
	if len(f.log()) != 1 {
		t.Fatalf("requests %q", f.log())
	}
}

func TestFailures_KnownOrUnknownOutcome(t *testing.T) {
	t.Run("5xx after a write is unknown", func(t *testing.T) {
		f := newFakeGitHub(t)
		f.before = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPost {
				writeJSON(w, http.StatusBadGateway, map[string]any{"message": "Server Error"})
				return true
			}
			return false
		}
		fm := newFamily(t, f)
		_, err := fm.apply(t, "github_create_issue", `{"repo":"acme/widgets","title":"t"}`, decision)
		toolstest.ToolError(t, err, true, "HTTP 502", "may have had its effect")
	})
	t.Run("422 is refused", func(t *testing.T) {
		f := newFakeGitHub(t)
		f.before = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPost {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
					"errors": []any{map[string]any{"resource": "Issue", "field": "labels", "code": "invalid"}}})
				return true
			}
			return false
		}
		fm := newFamily(t, f)
		_, err := fm.apply(t, "github_create_issue", `{"repo":"acme/widgets","title":"t"}`, decision)
		toolstest.ToolError(t, err, false, "HTTP 422", "Validation Failed; labels invalid")
	})
	t.Run("timeout after sending is unknown", func(t *testing.T) {
		f := newFakeGitHub(t)
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		f.before = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Method == http.MethodPost {
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return true
			}
			return false
		}
		fm := newFamily(t, f)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := fm["github_create_issue"].Apply(ctx, tools.Call{Input: json.RawMessage(`{"repo":"acme/widgets","title":"t"}`)}, tools.Decision{ID: decision})
		toolstest.ToolError(t, err, true, "timed out after the request was sent")
	})
	t.Run("no connection is known", func(t *testing.T) {
		f := newFakeGitHub(t)
		fm := newFamily(t, f)
		f.srv.Close()
		_, err := fm.apply(t, "github_comment", `{"repo":"acme/widgets","number":1,"body":"b"}`, decision)
		toolstest.ToolError(t, err, false, "nothing was sent")
		_, err = fm.run(t, "github_get_issue", `{"repo":"acme/widgets","number":1}`)
		toolstest.ToolError(t, err, false, "nothing was sent")
	})
	t.Run("bad decision id", func(t *testing.T) {
		f := newFakeGitHub(t)
		fm := newFamily(t, f)
		_, err := fm.apply(t, "github_create_issue", `{"repo":"acme/widgets","title":"t"}`, "dec --> <b>")
		toolstest.ToolError(t, err, false, "decision id", "nothing was sent")
		if len(f.log()) != 0 {
			t.Fatal("sent")
		}
	})
}

// TestTools_RepoFoldsCase: GitHub compares owners and repository names
// ignoring case, so every tool with a repo declares it, and its canonical
// form is lower case: a policy on acme/api catches Acme/API (issue 24).
func TestTools_RepoFoldsCase(t *testing.T) {
	f := newFakeGitHub(t)
	f.seed("octocat/Hello-World", fakeIssue{number: 1347, title: "Amazing new feature", pull: true})
	fm := newFamily(t, f)
	for name, tool := range fm {
		hasRepo := strings.Contains(string(tool.Input), `"repo":`)
		if hasRepo != slices.Equal(tool.FoldCase, []string{"$.repo"}) {
			t.Errorf("%s: fold_case %v with a repo argument: %v", name, tool.FoldCase, hasRepo)
		}
	}
	canon, err := fm["github_comment"].CanonicalInput(json.RawMessage(`{"repo":"OctoCat/Hello-WORLD","number":1347,"body":"LGTM"}`))
	if err != nil || string(canon) != `{"repo":"octocat/hello-world","number":1347,"body":"LGTM"}` {
		t.Fatalf("canonical input %s, %v", canon, err)
	}
	card, err := fm.preview(t, "github_comment", string(canon))
	if err != nil || card.Title != "Comment on octocat/hello-world#1347" {
		t.Fatalf("the canonical repo is not what the tool acts on: %+v, %v", card, err)
	}
}
