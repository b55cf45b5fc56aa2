package webtest

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"

	"brain/engine/model/fakemodel"
)

// spanDuration is how a span's state shows its duration (web's dur).
var spanDuration = regexp.MustCompile(`^\s*(\d+ms|\d+\.\ds|\d+m\d\ds|\d+h\d\dm)\s*$`)

// TestConsole_TraceOfTwoTools: a turn whose model calls two tools in one
// round shows, in the session's trace, as one turn holding a span for
// each tool with its duration; the arguments and results are collapsed
// until opened, and the bookkeeping events (turn started, status) show
// nowhere but in the raw events view.
func TestConsole_TraceOfTwoTools(t *testing.T) {
	r := newRig(t)
	var s struct{ ID string }
	r.api("POST", "/v1/sessions", map[string]any{}, &s)
	r.model.Push(
		fakemodel.ToolCalls(
			fakemodel.Call{Name: "lookup_ticket", Input: `{"id":"T-41"}`},
			fakemodel.Call{Name: "lookup_ticket", Input: `{"id":"T-42"}`}),
		fakemodel.Text("Both tickets are open."),
	)
	r.api("POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "are T-41 and T-42 open?"}, nil)

	turn := `//li[contains(@class,"turn") and .//span[@class="what" and contains(text(),"Turn 1 · completed")]]`
	r.do("sign in and open the session's trace",
		chromedp.Navigate(r.base+"/login?next=/sessions/"+s.ID),
		chromedp.WaitVisible(chromedp.CSS(`input[name=key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=key]`), apiKey),
		chromedp.Submit(chromedp.CSS(`form.login`)),
		chromedp.WaitVisible(turn+`//summary`),
		chromedp.WaitVisible(`//li[contains(@class,"kind-agent")]//p[contains(text(),"Both tickets are open.")]`),
	)
	if facts := get(r, "read the turn's facts", chromedp.Text(turn+`//span[@class="turn-facts"]`)); !regexp.MustCompile(`2 tool calls`).MatchString(facts) {
		t.Fatalf("the turn's facts say %q, want 2 tool calls", facts)
	}
	// A finished turn is folded; opening it shows its spans.
	r.do("open the turn", chromedp.Click(turn+`/details/summary`), chromedp.WaitVisible(turn+`//li[contains(@class,"span-tool")]`))
	tools := turn + `//li[contains(@class,"span-tool")]`
	if n := get(r, "count the tool spans", chromedp.Evaluate[int](`document.evaluate('count(`+tools+`)', document, null, XPathResult.NUMBER_TYPE, null).numberValue`)); n != 2 {
		t.Fatalf("%d tool spans, want 2", n)
	}
	for i, id := range []string{"T-41", "T-42"} {
		span := "(" + tools + ")[" + string(rune('1'+i)) + "]"
		if name := get(r, "read a span's tool", chromedp.Text(span+`//span[@class="what"]/code`)); name != "lookup_ticket" {
			t.Fatalf("span %d names %q", i+1, name)
		}
		if state := get(r, "read a span's state", chromedp.Text(span+`//span[@class="span-state"]`)); !spanDuration.MatchString(state) {
			t.Fatalf("span %d's state is %q, want a duration", i+1, state)
		}
		args := span + `//details[summary[text()="arguments"]]`
		// Collapsed: the arguments and the result are in the page, not shown.
		result := span + `//details[summary[text()="result"]]`
		if r.shown(args+`/pre`) || r.shown(result+`/pre`) {
			t.Fatalf("span %d's arguments or result are shown before they are opened", i+1)
		}
		r.do("open the arguments", chromedp.Click(args+`/summary`),
			chromedp.WaitVisible(args+`/pre[contains(text(),"`+id+`")]`))
		if !r.shown(args+`/pre`) || r.shown(result+`/pre`) {
			t.Fatalf("span %d: opening the arguments did not show them alone", i+1)
		}
	}
	// Bookkeeping is folded away in the trace and kept in the raw view.
	const bookkeeping = `//li[contains(@class,"item")]//a[@class="seq" and (@title="turn.started" or @title="session.status")]`
	if n := get(r, "count bookkeeping rows", chromedp.Evaluate[int](`document.evaluate('count(`+bookkeeping+`)', document, null, XPathResult.NUMBER_TYPE, null).numberValue`)); n != 0 {
		t.Fatalf("%d bookkeeping rows in the trace", n)
	}
	r.do("the raw events view keeps the log",
		chromedp.Navigate(r.base+"/sessions/"+s.ID+"?view=raw"),
		chromedp.WaitVisible(`//a[@class="seq" and @title="turn.started"]`))
}

// shown reports whether the element at xpath is rendered: present, and
// not inside a closed <details> or anything else hidden.
func (r *rig) shown(xpath string) bool {
	r.t.Helper()
	q, _ := json.Marshal(xpath)
	return get(r, "check "+xpath, chromedp.Evaluate[bool](`(() => {
		const n = document.evaluate(`+string(q)+`, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
		return !!n && n.checkVisibility();
	})()`))
}
