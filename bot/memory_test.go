package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"brain/bot/api/client"
	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/model/fakemodel"
)

// mention posts an app_mention starting a thread in channel.
func (sa *slackApp) mentionIn(channel, eventID, user, text string) string {
	sa.t.Helper()
	ts := fmt.Sprintf("%d.000100", sa.nextTS.Add(1))
	body, _ := json.Marshal(map[string]any{
		"type": "event_callback", "team_id": slackfake.TeamID, "event_id": eventID, "event_time": 1,
		"event": map[string]any{"type": "app_mention", "user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts},
	})
	if st := sa.post("/slack/events", "application/json", body); st != 200 {
		sa.t.Fatalf("event %s: status %d", eventID, st)
	}
	return ts
}

// memoryResults waits for the session of a thread to finish a turn and
// returns its memory tool results and memory.changed events.
func (sa *slackApp) memoryResults(channel, ts string) ([]engine.ToolCallResult, []engine.MemoryChanged) {
	sa.t.Helper()
	return memoryResultsOf(sa.testApp, "slack:"+slackfake.TeamID+":"+channel+":"+ts)
}

// memoryResultsOf waits for the session of threadKey to finish a turn
// and returns its memory tool results and memory.changed events.
func memoryResultsOf(ta *testApp, threadKey string) ([]engine.ToolCallResult, []engine.MemoryChanged) {
	ta.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := ta.app.store.SessionByThread(ctx, threadKey)
		if err == nil {
			evs, err := ta.app.store.Events(ctx, s.ID, 0, 0)
			if err != nil {
				ta.t.Fatal(err)
			}
			var results []engine.ToolCallResult
			var changes []engine.MemoryChanged
			done := false
			for _, ev := range evs {
				p, _ := ev.Decode()
				switch p := p.(type) {
				case engine.ToolCallResult:
					if p.Name == "memory" {
						results = append(results, p)
					}
				case engine.MemoryChanged:
					changes = append(changes, p)
				case engine.TurnCompleted:
					done = true
				}
			}
			if done {
				return results, changes
			}
		}
		if time.Now().After(deadline) {
			ta.t.Fatalf("no finished turn in %s", threadKey)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A fact stored in one Slack thread is read in a new thread of the same
// channel; a thread in another channel cannot see it.
func TestMemory_ChannelScopeAcrossSlackThreads(t *testing.T) {
	sa := newSlackAppAgent(t, "    memory: {scopes: [agent, channel, person]}\n", "")
	const fact = "Deploys happen on Tuesdays."
	create := fmt.Sprintf(`{"command":"create","path":"/memories/channel/facts.md","file_text":%q}`, fact)
	view := `{"command":"view","path":"/memories/channel/facts.md"}`

	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: create}), fakemodel.Text("Noted."))
	first := sa.mentionIn("C1", "Ev1", "U1", "<@UBOT> remember: "+fact)
	res, changes := sa.memoryResults("C1", first)
	if len(res) != 1 || res[0].Result.IsError || !strings.Contains(res[0].Result.Text(), "File created successfully at: /memories/channel/facts.md") {
		t.Fatalf("create results = %+v", res)
	}
	want := engine.MemoryChanged{Command: "create", Scope: "channel:slack:" + slackfake.TeamID + ":C1",
		Path: "/memories/channel/facts.md", Version: 1, Diff: "+" + fact}
	if len(changes) != 1 || changes[0] != want {
		t.Fatalf("memory.changed = %+v, want %+v", changes, want)
	}

	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: view}), fakemodel.Text("Read."))
	second := sa.mentionIn("C1", "Ev2", "U2", "<@UBOT> when do we deploy?")
	res, _ = sa.memoryResults("C1", second)
	if len(res) != 1 || res[0].Result.IsError || !strings.Contains(res[0].Result.Text(), "1\\t"+fact) {
		t.Fatalf("view in a new thread of C1 = %+v", res)
	}

	sa.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: view}), fakemodel.Text("Other."))
	other := sa.mentionIn("C2", "Ev3", "U1", "<@UBOT> when do we deploy?")
	res, _ = sa.memoryResults("C2", other)
	if len(res) != 1 || !res[0].Result.IsError || !strings.Contains(res[0].Result.Text(), "does not exist") ||
		strings.Contains(res[0].Result.Text(), fact) {
		t.Fatalf("view in C2 = %+v", res)
	}
	f, err := sa.app.store.MemoryFile(context.Background(), want.Scope, "facts.md")
	if err != nil || f.UpdatedBy != "U1" || f.Content != fact {
		t.Fatalf("stored = %+v, %v", f, err)
	}

	// The console shows the scope, the file and who wrote it from where.
	if status, _, body := sa.do("GET", "/memory", nil); status != 200 || !strings.Contains(string(body), want.Scope) {
		t.Fatalf("GET /memory: %d\n%s", status, body)
	}
	status, _, body := sa.do("GET", "/memory?scope="+want.Scope+"&path=facts.md", nil)
	if status != 200 || !strings.Contains(string(body), fact) || !strings.Contains(string(body), `href="/sessions/`+f.SessionID+`"`) {
		t.Fatalf("GET the file's page: %d\n%s", status, body)
	}
}

// A Linear team is the channel: a fact stored from one issue's session is
// read from another issue of the same team, and not from another team's.
func TestMemory_ChannelScopeIsTheLinearTeam(t *testing.T) {
	la := newLinearAppAgent(t, "    memory: {scopes: [channel]}\n", "")
	const fact = "Releases are cut from main on Fridays."
	create := fmt.Sprintf(`{"command":"create","path":"/memories/channel/release.md","file_text":%q}`, fact)
	view := `{"command":"view","path":"/memories/channel/release.md"}`
	const (
		teamA = "0f7c1a52-5d1e-4d6b-9a49-1c0b6f2e7a01"
		teamB = "0f7c1a52-5d1e-4d6b-9a49-1c0b6f2e7a02"
		sidB  = "5c2a2e8e-6d3a-4e0b-9a43-0d7a1c5b8f12"
		sidC  = "5c2a2e8e-6d3a-4e0b-9a43-0d7a1c5b8f13"
	)

	la.team = teamA
	la.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: create}), fakemodel.Text("Noted."))
	if st := la.event("created", sidA, "@brain remember: "+fact, ""); st != 200 {
		t.Fatalf("status %d", st)
	}
	res, changes := memoryResultsOf(la.testApp, "linear:"+sidA)
	if len(res) != 1 || res[0].Result.IsError || len(changes) != 1 || changes[0].Scope != "channel:linear:"+teamA {
		t.Fatalf("create: results %+v, changes %+v", res, changes)
	}

	la.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: view}), fakemodel.Text("Read."))
	la.event("created", sidB, "@brain when do we release?", "")
	res, _ = memoryResultsOf(la.testApp, "linear:"+sidB)
	if len(res) != 1 || res[0].Result.IsError || !strings.Contains(res[0].Result.Text(), fact) {
		t.Fatalf("view from another issue of the team = %+v", res)
	}

	la.team = teamB
	la.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: view}), fakemodel.Text("Other."))
	la.event("created", sidC, "@brain when do we release?", "")
	res, _ = memoryResultsOf(la.testApp, "linear:"+sidC)
	if len(res) != 1 || !res[0].Result.IsError || strings.Contains(res[0].Result.Text(), fact) {
		t.Fatalf("view from another team = %+v", res)
	}
}

const memoryKey = "memory-ops-key-0123456789abcdef0123456789abcdef"

// A review policy on agent-scope writes holds the memory tool's create
// for approval (reads still run at once); once approved, it is applied and
// recorded; the API and its client list, show, edit and delete it.
func TestMemory_PolicyHoldsWritesAndTheAPIManagesThem(t *testing.T) {
	ta := newTestApp(t, `    memory: {scopes: [agent, person]}
api_keys: [{name: ops, key: `+memoryKey+`, act_for: true}]
approvals:
  policies:
    - name: agent-memory
      tool: memory
      when:
        - {path: $.command, regexp: "^(create|str_replace|insert|delete|rename)$"}
        - {path: $.path, regexp: "^/memories/agent/"}
      require: 1
`, Options{})
	create := `{"command":"create","path":"/memories/agent/style.md","file_text":"Answer in British English."}`
	ta.fake.Push(fakemodel.ToolCalls(
		fakemodel.Call{Name: "memory", Input: create},
		fakemodel.Call{Name: "memory", Input: `{"command":"create","path":"/memories/person/me.md","file_text":"likes tea"}`},
		fakemodel.Call{Name: "memory", Input: `{"command":"view","path":"/memories"}`},
	), fakemodel.Text("Asked."))
	var s engine.Session
	ta.must(201, "POST", "/v1/sessions", map[string]any{"agent": "default", "started_by": "ann", "message": "remember my style"}, &s)
	_, evs := ta.waitTurns(s.ID, 1)
	var approvalID string
	var results []string
	for _, ev := range evs {
		switch p, _ := ev.Decode(); p := p.(type) {
		case engine.ApprovalRequested:
			approvalID = p.ApprovalID
			if p.Title != "Memory: create /memories/agent/style.md" {
				t.Errorf("card title %q", p.Title)
			}
		case engine.ToolCallResult:
			results = append(results, p.Result.Text())
		}
	}
	if approvalID == "" || len(results) != 3 || !strings.Contains(results[0], "Recorded for approval") ||
		!strings.Contains(results[1], "File created successfully at: /memories/person/me.md") ||
		!strings.Contains(results[2], "/memories/person/me.md") || strings.Contains(results[2], "style.md") {
		t.Fatalf("approval %q, results %q", approvalID, results)
	}
	ta.must(200, "POST", "/v1/approvals/"+approvalID+"/decision", map[string]any{"decision": "approve", "by": "ann"}, nil)
	ta.waitApproval(approvalID, engine.ApprovalApplied)

	cfg := *ta.app.cfg
	cfg.Listen = ta.app.Addr()
	d, err := client.Dial(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	scopes, err := d.MemoryScopes(ctx)
	if err != nil || len(scopes) != 2 || scopes[0].Scope != "agent:default" || scopes[1].Scope != "person:api:ann" {
		t.Fatalf("scopes = %+v, %v", scopes, err)
	}
	f, hist, err := d.MemoryFile(ctx, "agent:default", "style.md")
	if err != nil || f.Content == nil || *f.Content != "Answer in British English." || len(hist) != 1 ||
		hist[0].By != "ann" || hist[0].SessionID != s.ID || hist[0].Op != "create" {
		t.Fatalf("file = %+v, history %+v, %v", f, hist, err)
	}
	changed := 0
	for _, ev := range ta.events(s.ID) {
		if ev.Type == engine.EventMemoryChanged {
			changed++
		}
	}
	if changed != 2 {
		t.Errorf("%d memory.changed events, want the person file's and the approved one's", changed)
	}

	// An operator's edit names the version it read.
	ta.must(409, "PUT", "/v1/memory/file?scope=agent:default&path=style.md", map[string]any{"content": "x", "version": 7}, nil)
	var edited client.MemoryFile
	ta.must(200, "PUT", "/v1/memory/file?scope=agent:default&path=style.md", map[string]any{"content": "Answer in plain English.", "version": 1, "by": "root"}, &edited)
	if edited.Version != 2 || edited.UpdatedBy != "root" || edited.SessionID != "" {
		t.Fatalf("edited = %+v", edited)
	}
	_, hist, _ = d.MemoryFile(ctx, "agent:default", "style.md")
	if len(hist) != 2 || hist[0].Op != "operator_edit" || hist[0].Diff != "-Answer in British English.\n+Answer in plain English." {
		t.Fatalf("history = %+v", hist)
	}
	files, err := d.MemoryFiles(ctx, "agent:default", true)
	if err != nil || len(files) != 1 || *files[0].Content != "Answer in plain English." {
		t.Fatalf("export = %+v, %v", files, err)
	}
	if err := d.DeleteMemoryFile(ctx, "agent:default", "style.md", 1); engine.CodeOf(err) != engine.CodeConflict {
		t.Fatalf("delete at a stale version = %v", err)
	}
	if err := d.DeleteMemoryFile(ctx, "agent:default", "style.md", 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.MemoryFile(ctx, "agent:default", "style.md"); engine.CodeOf(err) != engine.CodeNotFound {
		t.Fatalf("after delete: %v", err)
	}
}

// memory.read_only offers view alone.
func TestMemory_ReadOnlyAgent(t *testing.T) {
	ta := newTestApp(t, "    memory: {scopes: [agent], read_only: true}\n", Options{})
	ta.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "memory", Input: `{"command":"create","path":"/memories/agent/a.md","file_text":"x"}`}), fakemodel.Text("Could not."))
	var s engine.Session
	ta.must(201, "POST", "/v1/sessions", map[string]any{"agent": "default", "message": "remember x"}, &s)
	_, evs := ta.waitTurns(s.ID, 1)
	for _, ev := range evs {
		if r, ok := decoded(ev.Decode()).(engine.ToolCallResult); ok {
			if !r.Result.IsError || !strings.Contains(r.Result.Text(), "memory is read-only for this agent") {
				t.Fatalf("result = %+v", r.Result)
			}
			if scopes, _ := ta.app.store.MemoryScopes(context.Background()); len(scopes) != 0 {
				t.Fatalf("a read-only agent stored %+v", scopes)
			}
			return
		}
	}
	t.Fatal("no tool result")
}

func decoded(p engine.Payload, _ error) engine.Payload { return p }
