package webtest

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"brain/engine/model/fakemodel"
	"brain/tools"
)

// hostilePatch is a change whose added lines are markup: the page must
// show them as text.
const hostilePatch = `abc1234 → main of acme/widgets, 1 commits
  abc1234def Add a banner

diff --git a/web/banner.html b/web/banner.html
--- a/web/banner.html
+++ b/web/banner.html
@@ -1,2 +1,2 @@
 <div class="banner">
-<p>Welcome</p>
+<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1,2 @@
 widgets
+Now with a banner.
`

// TestConsole_ApprovalShowsTheWholeDiff: the approval page of a proposed
// change lists its files with their insertions and deletions and shows
// the whole patch, lines added and removed marked, and a patch that adds
// <script> and an onerror image shown as text: nothing runs, no element
// is made of it. axe-core finds nothing serious on the page.
func TestConsole_ApprovalShowsTheWholeDiff(t *testing.T) {
	propose := tools.Definition{
		Name: "propose_change", Description: "Propose a change",
		Input: json.RawMessage(`{"type":"object"}`),
		Preview: func(ctx context.Context, c tools.Call) (tools.Card, error) {
			return tools.Card{
				Title: "Propose a pull request to acme/widgets: Add a banner",
				Facts: []tools.Fact{
					{Label: "Files changed", Value: "2 files, +2 −1: web/banner.html, README.md"},
					{Label: "web/banner.html (+1 −1)", Value: "@@ -1,2 +1,2 @@\n <div class=\"banner\">\n-<p>Welcome</p>\n+<script>window.pwned = 1</script>"},
					{Label: "README.md (+1 −0)", Value: "@@ -1 +1,2 @@\n widgets\n+Now with a banner."},
				},
				Detail: hostilePatch,
				Found:  map[string]string{"head": strings.Repeat("a", 40)},
			}, nil
		},
		Apply: func(ctx context.Context, c tools.Call, d tools.Decision) (json.RawMessage, error) {
			return json.RawMessage(`{}`), nil
		},
	}
	r := startRig(t, nil, "", []tools.Definition{propose})
	axe, err := os.ReadFile(axeSource)
	if err != nil {
		t.Fatalf("axe-core is not installed (make test-deps): %v", err)
	}
	r.model.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "propose_change", Input: `{}`}), fakemodel.Text("Proposed."))
	r.slackMention("Ev1", "U0ADA", "add a banner", "1700000001.000100")
	r.do("sign in with Slack",
		chromedp.Navigate(r.base+"/login?next=/approvals"),
		chromedp.Click(chromedp.CSS(`a.slack`)),
		chromedp.WaitVisible(`//article//a[text()="Propose a pull request to acme/widgets: Add a banner"]`))
	href := get(r, "read the approval's link", chromedp.Evaluate[string](`document.querySelector('article a[href^="/approvals/"]').getAttribute('href')`))
	r.do("open the approval", chromedp.Navigate(r.base+href), chromedp.WaitVisible(chromedp.CSS(`pre.diff`)))

	facts := get(r, "read the card's files", chromedp.Evaluate[string](
		`Array.from(document.querySelectorAll('main dt')).map(dt => dt.innerText + ' = ' + dt.nextElementSibling.innerText.split('\n')[0]).join('\n')`))
	for _, want := range []string{"Files changed = 2 files, +2 −1: web/banner.html, README.md", "web/banner.html (+1 −1) = @@ -1,2 +1,2 @@", "README.md (+1 −0) = @@ -1 +1,2 @@"} {
		if !strings.Contains(facts, want) {
			t.Errorf("the card lacks %q:\n%s", want, facts)
		}
	}
	lines := get(r, "read the diff", chromedp.Evaluate[string](
		`Array.from(document.querySelectorAll('pre.diff span')).map(s => (s.className || '-') + ' ' + s.textContent).join('\n')`))
	for _, want := range []string{
		"file diff --git a/web/banner.html b/web/banner.html",
		"hunk @@ -1,2 +1,2 @@",
		"del -<p>Welcome</p>",
		`add +<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">`,
		"-  widgets",
		"add +Now with a banner.",
	} {
		if !strings.Contains(lines+"\n", want+"\n") {
			t.Errorf("the diff lacks the line %q:\n%s", want, lines)
		}
	}
	unsafe := get(r, "look for markup made of the patch", chromedp.Evaluate[string](
		`JSON.stringify([document.querySelectorAll('pre.diff *:not(span)').length, document.querySelectorAll('main script, main img').length, window.pwned === undefined])`))
	if unsafe != "[0,0,true]" {
		t.Fatalf("the patch became markup: %s", unsafe)
	}
	r.do("load axe-core", chromedp.Evaluate[chromedp.Void](string(axe)))
	raw := get(r, "run axe-core", chromedp.Evaluate[string](axeViolations, chromedp.EvalAwaitPromise))
	var found []string
	if err := json.Unmarshal([]byte(raw), &found); err != nil {
		t.Fatalf("axe-core: %v: %s", err, raw)
	}
	for _, v := range found {
		t.Error(v)
	}
}
