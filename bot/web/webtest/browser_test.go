package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"brain/bot"
	"brain/bot/config"
	"brain/channels/slack/slackfake"
	"brain/engine/model/fakemodel"
	"brain/tools"
	"brain/webhooks/slackhook"
)

const (
	apiKey        = "console-test-key-0123456789-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f"
	signingSecret = "console-test-signing-secret"
	// waitLimit only stops a broken test from hanging; nothing is timed.
	waitLimit = 60 * time.Second
)

// chromium finds the browser, or skips (fails with
// BRAIN_REQUIRE_CHROMIUM=1) when it is not installed.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("BRAIN_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("Chromium is not installed and BRAIN_REQUIRE_CHROMIUM=1: install Debian's chromium package (make test-deps)")
	}
	t.Skip("Chromium is not installed (Debian: apt-get install chromium, or make test-deps); skipping the browser tests")
	return ""
}

// rig is a running brain with its fakes and a browser.
type rig struct {
	t       *testing.T
	base    string
	app     *bot.App
	model   *fakemodel.Server
	slack   *slackfake.Server
	target  atomic.Int64 // tickets the approval tool created
	probe   atomic.Int64 // requests a hostile message tried to make
	probeAt string
	ctx     context.Context // the browser tab
	dialogs atomic.Int64
	shots   string
}

// newRig starts brain with the test config plus extra (more top-level YAML).
func newRig(t *testing.T, extra ...string) *rig {
	t.Helper()
	return newRigWith(t, nil, "", extra...)
}

// newRigAgent is newRig with YAML lines added to the agent (indented 4).
func newRigAgent(t *testing.T, agentMore string, extra ...string) *rig {
	t.Helper()
	return newRigWith(t, nil, agentMore, extra...)
}

// newSeededRig is newRig that first calls seed, when set, with the path
// of the database brain will open (data_dir/brain.db), before brain starts.
func newSeededRig(t *testing.T, seed func(dbPath string), extra ...string) *rig {
	t.Helper()
	return newRigWith(t, seed, "", extra...)
}

// newRigWith starts the rig: seed (when set) fills the database first,
// agentMore is added to the agent, extra at the top level.
func newRigWith(t *testing.T, seed func(dbPath string), agentMore string, extra ...string) *rig {
	t.Helper()
	return startRig(t, seed, agentMore, nil, extra...)
}

// startRig is newRigWith with built-in tools given to the agent too.
func startRig(t *testing.T, seed func(dbPath string), agentMore string, defs []tools.Definition, extra ...string) *rig {
	t.Helper()
	exe := chromium(t)
	r := &rig{t: t, model: fakemodel.New(), slack: slackfake.New(), shots: t.TempDir()}
	t.Cleanup(r.model.Close)
	t.Cleanup(r.slack.Close)
	r.slack.EnableOIDC("cid", "csecret", slackfake.OIDCUser{UserID: "U0ADA", TeamID: slackfake.TeamID, Name: "Ada"})
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if req.Method == http.MethodGet { // lookup_ticket: reads only
			fmt.Fprint(w, `{"id":"T-1","status":"open"}`)
			return
		}
		r.target.Add(1)
		fmt.Fprint(w, `{"id":"T-1"}`)
	}))
	t.Cleanup(target.Close)
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.probe.Add(1) }))
	t.Cleanup(probe.Close)
	r.probeAt = probe.URL

	port := freePort(t)
	r.base = "http://127.0.0.1:" + port
	dir := t.TempDir()
	cfgText := fmt.Sprintf(`listen: 127.0.0.1:%s
data_dir: %s
public_url: %s
api_keys: [{name: ops, key: %s}]
models:
  default: {provider: anthropic, model: claude-test, base_url: %s, api_key: test-model-key, max_retries: 0, price: {input: 3.00, output: 15.00}}
agents:
  - name: default
    instructions: You are a test agent.
    tools: [create_ticket, lookup_ticket%s]
%stools:
  http:
    - name: lookup_ticket
      description: Read a ticket from the tracker
      input: {type: object, properties: {id: {type: string}}, required: [id]}
      method: GET
      url: %[8]s/tickets
    - name: create_ticket
      description: Create a ticket in the tracker
      input: {type: object, properties: {title: {type: string}}, required: [title]}
      method: POST
      url: %[8]s/tickets
      approval:
        title: "Create ticket {{.title}}"
        facts: [{label: Title, value: "{{.title}}"}]
slack:
  bot_token: xoxb-test-bot-token
  signing_secret: %s
  api_url: %s/api/
console:
  slack_signin: {client_id: cid, client_secret: csecret, authorize_url: %s%s}
  admins: [U0ADA] # Ada opens every page below, the schedules and status included
`, port, filepath.Join(dir, "data"), r.base, apiKey, r.model.URL(), toolNames(defs), agentMore, target.URL, signingSecret, r.slack.URL(), r.slack.URL(), slackfake.AuthorizePath) + strings.Join(extra, "")
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	if seed != nil {
		data := filepath.Join(dir, "data")
		if err := os.MkdirAll(data, 0o700); err != nil {
			t.Fatal(err)
		}
		seed(filepath.Join(data, "brain.db"))
	}
	cfg, err := config.Load(path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	app, err := bot.New(context.Background(), cfg, bot.Options{Stderr: io.Discard, Tools: defs})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.app = app
	t.Cleanup(func() {
		r.model.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil {
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	// Any dialog (alert, confirm) a page opens is counted and dismissed.
	dialogs := chromedp.Events(bctx, page.JavascriptDialogOpening)
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		for _, err := range dialogs {
			if err != nil {
				return
			}
			r.dialogs.Add(1)
			_, _ = chromedp.Call(bctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		<-listening
	})
	r.ctx = bctx
	return r
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// do runs browser steps, failing the test on error.
func (r *rig) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, waitLimit)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		dctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
		defer cancel()
		loc, _ := chromedp.Run(dctx, chromedp.Location())
		body, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		r.t.Fatalf("%s: %v (at %s)\n%s", what, err, loc, body)
	}
}

// get runs one browser action that returns a value.
func get[T any](r *rig, what string, a chromedp.Action[T]) T {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, waitLimit)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		r.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// api calls brain's HTTP API with the key.
func (r *rig) api(method, path string, body any, out any) {
	r.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, r.base+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		r.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			r.t.Fatal(err)
		}
	}
}

// slackMention posts a signed app_mention from user and returns its ts.
func (r *rig) slackMention(eventID, user, text, ts string) {
	r.t.Helper()
	body, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": slackfake.TeamID, "event_id": eventID, "event_time": 1,
		"event": map[string]any{"type": "app_mention", "user": user, "text": "<@" + slackfake.BotUserID + "> " + text, "ts": ts, "channel": "C1", "channel_type": "channel"},
	})
	req, _ := http.NewRequest("POST", r.base+"/slack/events", bytes.NewReader(body))
	now := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(slackhook.HeaderTimestamp, now)
	req.Header.Set(slackhook.HeaderSignature, slackhook.Signature(signingSecret, now, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("slack event: %d", resp.StatusCode)
	}
}

// waitFor polls cond (the fakes record what happened) until it holds.
func (r *rig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// screenshot saves the page to the test's screenshot directory (the
// docs' pictures come from TestConsole_AccessibleAndPictured).
func (r *rig) screenshot(name string) {
	r.t.Helper()
	png := get(r, "screenshot "+name, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(r.shots, name+".png"), png, 0o600); err != nil {
		r.t.Fatal(err)
	}
}

const unsafeNodes = `document.querySelectorAll('#timeline script, #timeline img, #timeline [onerror], #timeline a[href^="javascript"]').length`

func TestConsole_InABrowser(t *testing.T) {
	r := newRig(t)

	// Sign in with a key: the console sends a signed-out visitor to the
	// sign-in page and back.
	r.do("sign in with a key",
		chromedp.Navigate(r.base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=key]`), apiKey),
		chromedp.Submit(chromedp.CSS(`form.login`)),
		chromedp.WaitVisible(`//h1[text()="Sessions"]`),
		chromedp.WaitVisible(`//nav//span[@class="name" and text()="ops"]`),
	)

	// The list shows a session created through the API.
	var s struct{ ID string }
	r.api("POST", "/v1/sessions", map[string]any{}, &s)
	r.do("the list shows the API's session",
		chromedp.Navigate(r.base+"/sessions"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`a[href="/sessions/%s"]`, s.ID))),
	)

	// Its page shows the turn appear live: no reload (the marker set on
	// the window survives).
	r.do("open the session", chromedp.Navigate(r.base+"/sessions/"+s.ID),
		chromedp.WaitVisible(chromedp.CSS(`#live-note.is-live`)),
		chromedp.Evaluate[chromedp.Void](`window.brainMarker = 7`))
	r.model.Push(fakemodel.Text("The answer is **42**."))
	r.api("POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "what is the answer?"}, nil)
	r.do("the turn appears live",
		chromedp.WaitVisible(`//li[contains(@class,"kind-agent")]//strong[text()="42"]`),
		chromedp.WaitVisible(`//li[contains(@class,"turn")]//span[@class="what" and contains(text(),"Turn 1 · completed")]`))
	if marker := get(r, "read the marker", chromedp.Evaluate[int](`window.brainMarker`)); marker != 7 {
		t.Fatalf("the page was reloaded (marker %d), not updated live", marker)
	}

	// While the model writes, its text shows as a provisional message, as
	// text (the tag in it is not parsed); the model is paused meanwhile,
	// so nothing here depends on timing. The committed message replaces it.
	pause := make(chan struct{})
	resume := sync.OnceFunc(func() { close(pause) })
	defer resume()
	r.model.Push(fakemodel.Text("Thinking about <b>bold</b> claims, then the verdict: streamed.").Slowly(8, 0).PauseAfter(3, pause))
	r.api("POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "think aloud"}, nil)
	r.do("the streamed text shows while the model writes",
		chromedp.WaitVisible(`//li[contains(@class,"is-provisional")]//p[contains(text(),"Thinking about <b>bold")]`))
	if tags := get(r, "count tags in the streamed text", chromedp.Evaluate[int](`document.querySelectorAll('#timeline .is-provisional b').length`)); tags != 0 {
		t.Fatalf("the streamed text was parsed as HTML: %d <b> elements", tags)
	}
	resume()
	r.do("the committed message replaces it",
		chromedp.WaitVisible(`//li[contains(@class,"kind-agent") and not(contains(@class,"is-provisional"))]//p[contains(.,"the verdict: streamed.")]`),
		chromedp.WaitNotPresent(chromedp.CSS(`#timeline .is-provisional`)))

	// Hostile text, from the user and the model, is shown inert.
	hostile := fmt.Sprintf("<script>alert('s')</script> <img src=%[1]s/img onerror=\"alert('e');fetch('%[1]s/onerror')\"> "+
		"[click me](javascript:alert('j')) ![pic](%[1]s/pic.png)", r.probeAt)
	r.model.Push(fakemodel.Text("You said: " + hostile))
	r.api("POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": hostile}, nil)
	r.do("hostile text arrives live", chromedp.WaitVisible(`//li[contains(@class,"kind-agent")]//p[contains(text(),"You said:")]`))
	live := get(r, "count unsafe nodes", chromedp.Evaluate[int](unsafeNodes))
	r.do("and after a reload", chromedp.Reload(),
		chromedp.WaitVisible(`//li[contains(@class,"kind-agent")]//p[contains(text(),"You said:")]`))
	r.do("click the javascript: link's text", chromedp.Click(`//li[contains(@class,"kind-agent")]//p[contains(.,"click me")]`))
	r.screenshot("session")
	reloaded := get(r, "count unsafe nodes", chromedp.Evaluate[int](unsafeNodes))
	if live != 0 || reloaded != 0 || r.dialogs.Load() != 0 || r.probe.Load() != 0 {
		t.Fatalf("hostile text was live: %d/%d unsafe nodes, %d dialogs, %d requests", live, reloaded, r.dialogs.Load(), r.probe.Load())
	}

	// An approval in a Slack thread, decided from the console by the
	// person who started it (signed in with Slack), is applied once and
	// its Slack card updated.
	r.model.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "create_ticket", Input: `{"title":"Printer on fire"}`}),
		fakemodel.Text("I proposed the ticket."),
		fakemodel.Text("The ticket exists."),
	)
	r.slackMention("Ev1", "U0ADA", "file a ticket: printer on fire", "1700000001.000100")
	var card slackfake.Message
	r.waitFor("the Slack approval card", func() bool {
		for _, m := range r.slack.Thread("C1", "1700000001.000100") {
			if strings.Contains(string(m.Blocks), "Create ticket Printer on fire") {
				card = m
				return true
			}
		}
		return false
	})
	if !strings.Contains(string(card.Blocks), r.base+"/approvals/") {
		t.Fatalf("the card does not link to the console: %s", card.Blocks)
	}
	r.do("sign in with Slack",
		chromedp.Navigate(r.base+"/login?next=/approvals"),
		chromedp.Click(chromedp.CSS(`a.slack`)),
		chromedp.WaitVisible(`//h1[text()="Approvals"]`),
		chromedp.WaitVisible(`//nav//span[@class="name" and text()="Ada (Slack)"]`),
		chromedp.WaitVisible(`//article//a[text()="Create ticket Printer on fire"]`),
	)
	r.screenshot("approvals")

	// A post without the CSRF token is refused.
	r.do("post without the CSRF token",
		chromedp.Evaluate[chromedp.Void](`(() => { const f = document.querySelector('form.decide'); f.querySelector('input[name=csrf]').remove();
			const b = document.createElement('input'); b.type = 'hidden'; b.name = 'decision'; b.value = 'approve'; f.appendChild(b); f.submit(); })()`),
		chromedp.WaitVisible(`//h1[text()="403"]`))
	if refused := get(r, "read the error", chromedp.Text(chromedp.CSS(`p.error`))); !strings.Contains(refused, "CSRF") || r.target.Load() != 0 {
		t.Fatalf("csrf-less post: %q, target hit %d times", refused, r.target.Load())
	}

	// A second tab shows the same pending card.
	first := r.ctx
	second, closeSecond := chromedp.NewContext(r.ctx)
	defer closeSecond()
	if err := chromedp.Do(second); err != nil { // opens the tab for the context's lifetime
		t.Fatal(err)
	}
	r.ctx = second
	r.do("open the approvals in a second tab", chromedp.Navigate(r.base+"/approvals"), chromedp.WaitVisible(chromedp.CSS(`form.decide button.approve`)))
	r.ctx = first

	r.do("approve from the page",
		chromedp.Navigate(r.base+"/approvals"),
		chromedp.SendKeys(chromedp.CSS(`form.decide textarea[name=comment]`), "looks right"),
		chromedp.Click(chromedp.CSS(`form.decide button.approve`)),
		chromedp.WaitVisible(`//p[@class="notice" and text()="approved"]`),
	)
	r.waitFor("the Slack card to show the decision", func() bool {
		m, _ := r.slack.Message("C1", card.TS)
		return m.Updates > 0 && strings.Contains(string(m.Blocks), "applied") && !strings.Contains(string(m.Blocks), "brain_approve")
	})
	if m, _ := r.slack.Message("C1", card.TS); !strings.Contains(string(m.Blocks), "U0ADA") {
		t.Fatalf("the card does not say who decided: %s", m.Blocks)
	}
	if n := r.target.Load(); n != 1 {
		t.Fatalf("the ticket was created %d times, want once", n)
	}
	// A second decision, from the other tab, is refused and applies nothing.
	r.ctx = second
	r.do("decide again from the second tab",
		// A script click: the tab is in the background, where Chrome
		// delivers no mouse input.
		chromedp.Evaluate[chromedp.Void](`document.querySelector('form.decide button.deny').click()`),
		chromedp.WaitVisible(`//h1[text()="409"]`))
	if second := get(r, "read the error", chromedp.Text(chromedp.CSS(`p.error`))); !strings.Contains(second, "already approved by U0ADA") || r.target.Load() != 1 {
		t.Fatalf("second decision: %q, target hit %d times", second, r.target.Load())
	}
	r.ctx = first

	r.do("the sessions list", chromedp.Navigate(r.base+"/sessions"), chromedp.WaitVisible(chromedp.CSS(`table.sessions`)))
	r.screenshot("sessions")

	// On a phone's width no page scrolls sideways (wide tables scroll in
	// their own box).
	r.do("a phone's viewport", chromedp.EmulateViewport(390, 844))
	for _, path := range []string{"/sessions", "/sessions/" + s.ID, "/approvals", "/schedules", "/status"} {
		r.do("open "+path+" on a phone", chromedp.Navigate(r.base+path), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
		if wide := get(r, "measure "+path, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); wide {
			r.screenshot("phone-wide")
			over := get(r, "find what is too wide", chromedp.Evaluate[string](`Array.from(document.querySelectorAll('main *')).filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(-4).map(e => e.tagName + '.' + e.className).join(', ')`))
			t.Errorf("%s is wider than a phone's screen: %s", path, over)
		}
	}
	r.do("the status page shows Slack", chromedp.WaitVisible(`//article[.//h3[contains(.,"Slack")]]//dd[contains(.,"Events API over HTTP")]`),
		chromedp.WaitVisible(`//article[.//h3[contains(.,"Slack")]]//dd[text()="connected"]`))
	r.screenshot("phone-status")

	// Without JavaScript the pages still read: the timeline is in the HTML.
	noJS, closeNoJS := chromedp.NewContext(first)
	defer closeNoJS()
	if err := chromedp.Do(noJS); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(noJS, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	r.ctx = noJS
	r.do("read a session without JavaScript", chromedp.Navigate(r.base+"/sessions/"+s.ID),
		chromedp.WaitVisible(`//li[contains(@class,"kind-agent")]//strong[text()="42"]`))
	if note := get(r, "read the live note", chromedp.Text(chromedp.CSS(`#live-note`))); !strings.HasPrefix(note, "Reload to see new events") {
		t.Fatalf("without JavaScript the note says %q", note)
	}
	r.ctx = first

	// A sign-in whose next leads off-site lands on the console's front page.
	r.do("sign in with an off-site next",
		chromedp.Navigate(r.base+"/login?next=/%09/evil.example"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=key]`), apiKey),
		chromedp.Submit(chromedp.CSS(`form.login`)),
		chromedp.WaitVisible(`//h1[text()="Sessions"]`))
	if at := get(r, "read the location", chromedp.Location()); at != r.base+"/" {
		t.Fatalf("after sign-in the browser is at %q, want %q", at, r.base+"/")
	}
	t.Logf("screenshots in %s", r.shots)
}

// toolNames is ", a, b" for the agent's tool list.
func toolNames(defs []tools.Definition) string {
	var b strings.Builder
	for _, d := range defs {
		b.WriteString(", " + d.Name)
	}
	return b.String()
}
