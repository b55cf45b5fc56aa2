package webtest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"brain/channels/slack/slackfake"
)

// TestConsole_BudgetsSetByAnAdminRefusedToOthers: an admin sees the
// agent's budget, sets a new limit with a reason, and sees it on the page
// (with who set it) and in /v1/budgets with the reason; a limit without a
// reason is not sent. A person who is not an admin is refused the page and
// the form, and the limit stays.
func TestConsole_BudgetsSetByAnAdminRefusedToOthers(t *testing.T) {
	r := newRig(t, "budgets: [{scope: agent, subject: default, period: day, tokens: 100000}]\n")

	r.do("sign in with Slack and open the budgets",
		chromedp.Navigate(r.base+"/login?next=/budgets"),
		chromedp.Click(chromedp.CSS(`a.slack`)),
		chromedp.WaitVisible(`//h1[text()="Budgets"]`),
		chromedp.WaitVisible(`//td[contains(., "Daily budget of agent")]/following-sibling::td[contains(., "100000 tokens")]`))

	// The reason is required: the browser does not send the form without one.
	r.do("set a limit without a reason",
		chromedp.SetValue(chromedp.CSS(`form[action="/budgets/raise"] input[name=tokens]`), "250000"),
		chromedp.Click(chromedp.CSS(`form[action="/budgets/raise"] button`)))
	if invalid := get(r, "read the reason's validity", chromedp.Evaluate[bool](`!document.querySelector('form[action="/budgets/raise"] input[name=reason]').checkValidity()`)); !invalid {
		t.Fatal("the form takes a limit without a reason")
	}

	r.do("set it with a reason",
		chromedp.SendKeys(chromedp.CSS(`form[action="/budgets/raise"] input[name=reason]`), "launch week"),
		chromedp.Click(chromedp.CSS(`form[action="/budgets/raise"] button`)),
		chromedp.WaitVisible(`//p[@class="notice" and text()="Set the day budget of agent default."]`))
	row := get(r, "read the budget's row", chromedp.Evaluate[string](`document.querySelector('main tbody tr').innerText.replace(/\s+/g, ' ')`))
	if !strings.Contains(row, "250000 tokens") || !strings.Contains(row, "Ada") {
		t.Errorf("the budget's row after the change: %q; want 250000 tokens set by Ada", row)
	}
	var listed struct {
		Budgets []struct {
			Scope, Subject, Period, Reason string
			Tokens                         int64
			SetBy                          string `json:"set_by"`
		}
	}
	r.api("GET", "/v1/budgets", nil, &listed)
	if len(listed.Budgets) != 1 || listed.Budgets[0].Tokens != 250000 || listed.Budgets[0].Reason != "launch week" || listed.Budgets[0].SetBy == "" {
		t.Fatalf("GET /v1/budgets = %+v; want the 250000-token limit with its reason and who set it", listed.Budgets)
	}

	// Someone else at the browser, not in console.admins.
	r.do("sign out", chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`a.slack`)))
	r.slack.SetOIDCUser(slackfake.OIDCUser{UserID: "U0BEN", TeamID: slackfake.TeamID, Name: "Ben"})
	r.do("sign in as Ben and open the budgets",
		chromedp.Navigate(r.base+"/login?next=/budgets"),
		chromedp.Click(chromedp.CSS(`a.slack`)),
		chromedp.WaitVisible(`//h1[text()="403"]`))
	if refused := get(r, "read the error", chromedp.Text(chromedp.CSS(`p.error`))); !strings.Contains(refused, "Only console admins") {
		t.Errorf("the budgets page to a non-admin says %q", refused)
	}
	if nav := get(r, "read the navigation", chromedp.Evaluate[bool](`!!document.querySelector('nav a[href="/budgets"]')`)); nav {
		t.Error("the navigation links a non-admin to the budgets")
	}
	// The form posted anyway (from a page of the console, with its token).
	r.do("post the form as Ben",
		chromedp.Navigate(r.base+"/sessions"), chromedp.WaitVisible(chromedp.CSS(`main h1`)),
		chromedp.Evaluate[chromedp.Void](`(() => {
			const f = document.createElement('form');
			f.method = 'post'; f.action = '/budgets/raise';
			const csrf = document.querySelector('form[action="/logout"] input[type=hidden]').cloneNode();
			f.append(csrf);
			for (const [k, v] of Object.entries({scope: 'agent', subject: 'default', period: 'day', tokens: '999999999', reason: 'more please'})) {
				const i = document.createElement('input'); i.name = k; i.value = v; f.append(i);
			}
			document.body.append(f); f.submit();
		})()`),
		chromedp.WaitVisible(`//h1[text()="403"]`))
	r.api("GET", "/v1/budgets", nil, &listed)
	if len(listed.Budgets) != 1 || listed.Budgets[0].Tokens != 250000 {
		t.Errorf("after a non-admin's post, GET /v1/budgets = %+v; want the admin's limit unchanged", listed.Budgets)
	}
}
