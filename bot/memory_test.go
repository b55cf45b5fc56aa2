package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err := sa.app.store.SessionByThread(ctx, "slack:"+slackfake.TeamID+":"+channel+":"+ts)
		if err == nil {
			evs, err := sa.app.store.Events(ctx, s.ID, 0, 0)
			if err != nil {
				sa.t.Fatal(err)
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
			sa.t.Fatalf("no finished turn in %s %s", channel, ts)
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
}
