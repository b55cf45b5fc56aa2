package webtest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"brain/engine/model/fakemodel"
)

// TestConsole_InboxDecidesInline: an approval waiting in a Slack thread
// shows in its requester's "Needs you" inbox with a count in the
// navigation; approving it there applies the tool once, updates the
// Slack card and empties the inbox; the same card decided again from a
// stale tab is refused and applies nothing.
func TestConsole_InboxDecidesInline(t *testing.T) {
	r := newRig(t)
	r.model.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "create_ticket", Input: `{"title":"Badge reader at the north door"}`}),
		fakemodel.Text("Filed once you approve it."),
		fakemodel.Text("The ticket exists."),
	)
	r.slackMention("Ev1", "U0ADA", "the badge reader at the north door is dead, file a ticket", "1700000002.000100")
	var card string
	r.waitFor("the Slack approval card", func() bool {
		for _, m := range r.slack.Thread("C1", "1700000002.000100") {
			if strings.Contains(string(m.Blocks), "Create ticket Badge reader") {
				card = m.TS
				return true
			}
		}
		return false
	})

	r.do("sign in with Slack and open the inbox",
		chromedp.Navigate(r.base+"/login?next=/inbox"),
		chromedp.Click(chromedp.CSS(`a.slack`)),
		chromedp.WaitVisible(`//h1[text()="Needs you"]`),
		chromedp.WaitVisible(`//article//a[text()="Create ticket Badge reader at the north door"]`))
	if badge := get(r, "read the navigation's count", chromedp.Text(chromedp.CSS(`nav a[href="/inbox"] .badge`))); badge != "1" {
		t.Fatalf("the navigation counts %q waiting, want 1", badge)
	}

	approval := get(r, "read the approval's link", chromedp.Evaluate[string](`document.querySelector('article a[href^="/approvals/"]').getAttribute('href')`))

	// A second tab holds the same card, to decide it again later.
	first := r.ctx
	stale, closeStale := chromedp.NewContext(r.ctx)
	defer closeStale()
	if err := chromedp.Do(stale); err != nil {
		t.Fatal(err)
	}
	r.ctx = stale
	r.do("open the inbox in a second tab", chromedp.Navigate(r.base+"/inbox"), chromedp.WaitVisible(chromedp.CSS(`form.decide button.deny`)))
	r.ctx = first

	r.do("approve inline",
		chromedp.SendKeys(chromedp.CSS(`form.decide textarea[name=comment]`), "north door, yes"),
		chromedp.Click(chromedp.CSS(`form.decide button.approve`)),
		chromedp.WaitVisible(`//p[@class="notice" and text()="approved"]`),
		chromedp.WaitVisible(`//p[@class="empty" and text()="No approval waits for you."]`),
		chromedp.WaitNotPresent(chromedp.CSS(`nav a[href="/inbox"] .badge`)))
	if at := get(r, "read the location", chromedp.Location()); !strings.HasPrefix(at, r.base+"/inbox") {
		t.Fatalf("after deciding, the browser is at %q, not back in the inbox", at)
	}
	r.waitFor("the Slack card to show the decision", func() bool {
		m, _ := r.slack.Message("C1", card)
		return m.Updates > 0 && strings.Contains(string(m.Blocks), "applied") && !strings.Contains(string(m.Blocks), "brain_approve")
	})
	if n := r.target.Load(); n != 1 {
		t.Fatalf("the ticket was created %d times, want once", n)
	}

	r.do("the approval page shows the comment", chromedp.Navigate(r.base+approval),
		chromedp.WaitVisible(`//*[contains(@class,"comment") and contains(.,"north door, yes")]`))

	r.ctx = stale
	r.do("deny from the stale tab",
		// A script click: the tab is in the background, where Chrome
		// delivers no mouse input.
		chromedp.Evaluate[chromedp.Void](`document.querySelector('form.decide button.deny').click()`),
		chromedp.WaitVisible(`//h1[text()="409"]`))
	if refused := get(r, "read the error", chromedp.Text(chromedp.CSS(`p.error`))); !strings.Contains(refused, "already approved by U0ADA") || r.target.Load() != 1 {
		t.Fatalf("second decision: %q, ticket created %d times", refused, r.target.Load())
	}
	r.ctx = first
}
