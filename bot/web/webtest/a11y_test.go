package webtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"brain/engine/model/fakemodel"
	"brain/tools/skills"
)

// axeSource is axe-core as `make test-deps` pins it (testdata/contracts).
var axeSource = filepath.Join("..", "..", "..", "testdata", "contracts", "node_modules", "axe-core", "axe.min.js")

// screenshotDir is where BRAIN_SCREENSHOTS=1 writes the docs' pictures.
var screenshotDir = filepath.Join("..", "..", "..", "docs", "console")

// axeViolations runs axe-core on the page and returns its serious and
// critical violations, one line each.
const axeViolations = `axe.run(document, {resultTypes: ['violations']}).then(r => JSON.stringify(
	r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical').map(v =>
		v.impact + ' ' + v.id + ': ' + v.help + ' at ' + v.nodes.slice(0, 4).map(n => n.target.join(' ')).join(' | '))))`

// TestConsole_AccessibleAndPictured opens every console page of a
// realistic demo session at a desktop's and a phone's width, runs axe-core
// on each (no serious or critical violation) and, with BRAIN_SCREENSHOTS=1,
// saves each as docs/console/<page>-<width>.png for the README and docs.
func TestConsole_AccessibleAndPictured(t *testing.T) {
	skillDir := t.TempDir()
	for path, text := range map[string]string{
		"release-notes/SKILL.md":            "---\nname: release-notes\ndescription: Write release notes for a version. Use when asked for release notes or a changelog.\n---\nRead references/style.md first.\n",
		"release-notes/references/style.md": "Short lines.\n",
		"triage/SKILL.md":                   "---\nname: triage\ndescription: Triage an incoming page. Use when someone reports an outage.\n---\nAsk for the service first.\n",
	} {
		if err := os.MkdirAll(filepath.Join(skillDir, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(skillDir, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := newRigAgent(t, "    skills: [release-notes]\n    memory: {scopes: [agent]}\n", `skills:
  sources:
    - {name: team, dir: `+skillDir+`}
schedules:
  - name: weekday-digest
    cron: "0 9 * * 1-5"
    timezone: Europe/Paris
    agent: default
    prompt: Summarise what changed in the tracker yesterday.
  - name: inbox-sweep
    cron: "@every 6h"
    agent: default
    prompt: Look for tickets nobody answered.
budgets: [{scope: schedule, subject: weekday-digest, period: month, cost: 20}]
`)
	axe, err := os.ReadFile(axeSource)
	if err != nil {
		t.Fatalf("axe-core is not installed (make test-deps): %v", err)
	}
	save := os.Getenv("BRAIN_SCREENSHOTS") == "1"
	if save {
		if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// A session started over the API: a question answered in two turns.
	var s struct{ ID string }
	r.api("POST", "/v1/sessions", map[string]any{}, &s)
	r.model.Push(fakemodel.Text("Here is a draft:\n\n## 2.4\n- **Search** over every session, by the database\n- A *Needs you* inbox for approvals and questions\n- Usage per day, agent and person\n\nWant me to post it to #releases?"))
	r.api("POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "Draft release notes for 2.4 from the merged pull requests."}, nil)
	r.model.Push(fakemodel.Text("Shortened to three lines; the full list stays in the changelog."))
	r.api("POST", "/v1/sessions/"+s.ID+"/events", map[string]any{"type": "user.message", "text": "Shorter, please: three lines at most."}, nil)

	// Both answers taken before the Slack thread's turn can ask for one.
	r.waitFor("the API session's answers", func() bool { return r.model.Pending() == 0 })

	// A Slack thread whose ticket waits for approval.
	r.model.Push(
		fakemodel.TextAndTools("I'll file it with the tracker.", fakemodel.Call{Name: "create_ticket", Input: `{"title":"Floor 3 printer jams on duplex jobs"}`}),
		fakemodel.Text("Filed once you approve it."),
	)
	r.slackMention("Ev1", "U0ADA", "the floor 3 printer jams on every duplex job again, can you file a ticket?", "1700000001.000100")
	r.waitFor("the Slack approval card", func() bool {
		for _, m := range r.slack.Thread("C1", "1700000001.000100") {
			if strings.Contains(string(m.Blocks), "Create ticket Floor 3 printer") {
				return true
			}
		}
		return false
	})

	r.do("sign in with Slack",
		chromedp.Navigate(r.base+"/login?next=/approvals"),
		chromedp.Click(chromedp.CSS(`a.slack`)),
		chromedp.WaitVisible(`//nav//span[@class="name" and text()="Ada (Slack)"]`),
		chromedp.WaitVisible(`//article//a[text()="Create ticket Floor 3 printer jams on duplex jobs"]`))
	approval := get(r, "read the approval's link", chromedp.Evaluate[string](`document.querySelector('article a[href^="/approvals/"]').getAttribute('href')`))
	var slackSession string
	r.do("find the Slack session", chromedp.Navigate(r.base+"/sessions"), chromedp.WaitVisible(chromedp.CSS(`table.sessions`)))
	slackSession = get(r, "read the Slack session's link", chromedp.Evaluate[string](
		`Array.from(document.querySelectorAll('table.sessions a[href^="/sessions/"]')).map(a => a.getAttribute('href')).find(h => h !== '/sessions/`+s.ID+`') || ''`))
	if slackSession == "" {
		t.Fatal("the sessions list does not show the Slack session")
	}

	// An operator's note in the agent's memory.
	r.api("PUT", "/v1/memory/file?scope=agent:default&path=deploys.md", map[string]any{"content": "Deploys happen on Tuesdays.\nNever on Fridays.", "version": 0}, nil)

	pages := []struct{ name, path string }{
		{"sessions", "/sessions"},
		{"session", slackSession},
		{"session-api", "/sessions/" + s.ID},
		{"inbox", "/inbox"},
		{"approvals", "/approvals"},
		{"approval", approval},
		{"schedules", "/schedules"},
		{"usage", "/usage"},
		{"budgets", "/budgets"},
		{"memory", "/memory"},
		{"memory-file", "/memory?scope=agent:default&path=deploys.md"},
		{"skills", "/skills"},
		{"status", "/status"},
		{"connections", "/connections"},
	}
	for _, width := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		r.do("a "+width.name+"'s viewport", chromedp.EmulateViewport(width.w, width.h))
		for _, p := range pages {
			r.do("open "+p.path, chromedp.Navigate(r.base+p.path), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
			// Turns open, so axe-core checks (and the picture shows) what is in them.
			r.do("open the turns", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details.turn-box').forEach(d => d.open = true)`))
			r.do("load axe-core", chromedp.Evaluate[chromedp.Void](string(axe)))
			raw := get(r, "run axe-core on "+p.path, chromedp.Evaluate[string](axeViolations, chromedp.EvalAwaitPromise))
			var found []string
			if err := json.Unmarshal([]byte(raw), &found); err != nil {
				t.Fatalf("axe-core's answer on %s: %v: %s", p.path, err, raw)
			}
			for _, v := range found {
				t.Errorf("%s (%s): %s", p.name, width.name, v)
			}
			if save {
				png := get(r, "screenshot "+p.name, chromedp.FullScreenshot(100))
				if err := os.WriteFile(filepath.Join(screenshotDir, p.name+"-"+width.name+".png"), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}

	// The skills page says where each skill comes from, its hash as
	// skill.loaded records it, and which agents use it.
	hash, err := skills.Hash(filepath.Join(skillDir, "release-notes"))
	if err != nil {
		t.Fatal(err)
	}
	r.do("open the skills page", chromedp.Navigate(r.base+"/skills"), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
	rows := get(r, "read the skills", chromedp.Evaluate[string](
		`Array.from(document.querySelectorAll('main tbody tr')).map(tr => tr.innerText.replace(/\s+/g, ' ') + ' title=' + tr.querySelector('code').title).join('\n')`))
	lines := strings.Split(rows, "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "release-notes") || !strings.Contains(lines[0], "team ("+skillDir+")") ||
		!strings.Contains(lines[0], skills.Short(hash)) || !strings.Contains(lines[0], "title="+hash) || !strings.HasSuffix(strings.TrimSpace(strings.Split(lines[0], " title=")[0]), "default") ||
		!strings.Contains(lines[1], "triage") || !strings.Contains(lines[1], "none") {
		t.Errorf("the skills page shows:\n%s\nwant release-notes from team (%s) at %s used by default, and triage used by none", rows, skillDir, hash)
	}
}
