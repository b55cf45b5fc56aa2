package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// compactedLog is a two-turn log with a context.compacted event of the
// given data after the first turn.
func compactedLog(t testing.TB, data []byte) []Event {
	var evs []Event
	add := func(turn string, p Payload) {
		ev, err := NewEvent(p)
		if err != nil {
			t.Fatal(err)
		}
		ev.Seq, ev.ID, ev.TurnID = int64(len(evs)+1), "evt_"+string(rune('a'+len(evs))), turn
		evs = append(evs, ev)
	}
	add("", Input{Text: "first"})
	add("t1", TurnStarted{InputIDs: []string{evs[0].ID}})
	add("t1", ToolCall{ID: "c1", Name: "fetch", Input: json.RawMessage(`{}`), ProviderID: "p1"})
	add("t1", ToolCallResult{CallID: "c1", ProviderCallID: "p1", Name: "fetch", Result: textResult(strings.Repeat("x", 5000), false, false)})
	add("t1", AgentMessage{Text: "done"})
	add("t1", TurnCompleted{Outcome: OutcomeCompleted})
	evs = append(evs, Event{Seq: int64(len(evs) + 1), ID: "evt_c", Type: EventContextCompacted, TurnID: "t2", Data: data})
	add("", Input{Text: "second"})
	add("t2", TurnStarted{InputIDs: []string{evs[len(evs)-1].ID}})
	add("t2", ToolCall{ID: "c2", Name: "fetch", Input: json.RawMessage(`{}`), ProviderID: "p2"})
	add("t2", ToolCallResult{CallID: "c2", ProviderCallID: "p2", Name: "fetch", Result: textResult("ok", false, false)})
	return evs
}

// checkContext fails unless msgs alternate roles and every tool result
// answers a call of the assistant message before it.
func checkContext(t *testing.T, msgs []Message) {
	t.Helper()
	for i, m := range msgs {
		if i > 0 && msgs[i-1].Role == m.Role {
			t.Fatalf("messages %d and %d are both %s", i-1, i, m.Role)
		}
		for _, r := range m.ToolResults {
			found := false
			if i > 0 {
				for _, c := range msgs[i-1].ToolCalls {
					found = found || c.ID == r.CallID
				}
			}
			if !found {
				t.Fatalf("message %d: result for %s answers no call before it", i, r.CallID)
			}
		}
	}
}

func TestBuildMessages_Compaction(t *testing.T) {
	cases := []struct {
		name, data string
		want       []string // texts the context holds
		not        []string // and does not
	}{
		{"summary to a round boundary", `{"reason":"budget","summary":"S1","from_seq":1,"to_seq":6,"kept":["K1"]}`,
			[]string{"S1", "K1", "second"}, []string{"first", strings.Repeat("x", 2000)}},
		{"shortened", `{"reason":"budget","shortened":[4]}`,
			[]string{"first", "brain shortened this tool result", "second"}, []string{strings.Repeat("x", 1001)}},
		{"summary ending between a call and its result", `{"reason":"budget","summary":"S2","from_seq":1,"to_seq":3}`,
			[]string{"S2", "done", "second"}, []string{"first"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := buildMessages(compactedLog(t, []byte(tc.data)))
			if err != nil {
				t.Fatal(err)
			}
			checkContext(t, msgs)
			all := ""
			for _, m := range msgs {
				all += m.Text + "\n"
				for _, r := range m.ToolResults {
					all += r.Content + "\n"
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("context lacks %q", w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(all, n) {
					t.Errorf("context holds %.40q", n)
				}
			}
		})
	}
}

// FuzzBuildMessages_Compaction: whatever a context.compacted event holds,
// the context stays well formed.
func FuzzBuildMessages_Compaction(f *testing.F) {
	f.Add([]byte(`{"reason":"budget","summary":"S","from_seq":1,"to_seq":6}`))
	f.Add([]byte(`{"reason":"budget","summary":"S","from_seq":1,"to_seq":3,"shortened":[4,11]}`))
	f.Add([]byte(`{"summary":"S","to_seq":-5}`))
	f.Add([]byte(`{"summary":"S","to_seq":99}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, _ := buildMessages(compactedLog(t, data))
		checkContext(t, msgs)
	})
}
