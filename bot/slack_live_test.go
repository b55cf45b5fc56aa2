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

// waitFor polls cond (the fake Slack changes under the bridge's
// goroutines) with a generous bound; it is not a timing assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// streamed returns the thread's streamed messages.
func (sa *slackApp) streamed(threadTS string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range sa.slack.Thread("C1", threadTS) {
		if m.Streamed {
			out = append(out, m)
		}
	}
	return out
}

// agentEvent posts one of Slack's agent events for the thread.
func (sa *slackApp) agentEvent(eventID string, event map[string]any) {
	sa.t.Helper()
	body, _ := json.Marshal(map[string]any{"type": "event_callback", "team_id": slackfake.TeamID, "event_id": eventID, "event": event})
	if st := sa.post("/slack/events", "application/json", body); st != 200 {
		sa.t.Fatalf("event %s: status %d", eventID, st)
	}
}

const longAnswer = "The first words arrive at once. Then the rest of a long answer follows, piece by piece, " +
	"until the model has written everything it meant to say about the question."

// TestSlack_StreamsTheAnswerAsItIsWritten: the first words reach Slack
// (chat.startStream, for the person and team Slack requires) while the
// model is still writing; the rest is appended and the stream stopped;
// the whole answer is one message, never posted again; the agent session
// is processing during the turn and active after.
func TestSlack_StreamsTheAnswerAsItIsWritten(t *testing.T) {
	sa := newSlackApp(t)
	pause := make(chan struct{})
	sa.fake.Push(fakemodel.Text(longAnswer).Slowly(8, 0).PauseAfter(4, pause))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> explain", "")

	waitFor(t, "the first words in Slack", func() bool {
		ms := sa.streamed(ts)
		return len(ms) == 1 && strings.HasPrefix(ms[0].Text, "The first") && ms[0].Streaming
	})
	s := sa.session(ts)
	if evs, _ := sa.app.engine.Events(context.Background(), s.ID, 0, 0); countType(evs, engine.EventAgentMessage) != 0 {
		t.Fatal("the answer was recorded before the model finished: not a stream")
	}
	// The status is set by the delivery of turn.started, which may come a
	// moment after the first words.
	waitFor(t, "the agent session processing", func() bool { return sa.slack.AgentStatus("C1", ts) == "processing" })
	start := sa.slack.Calls("chat.startStream")[0].Params
	if start.Get("recipient_user_id") != "U1" || start.Get("recipient_team_id") != slackfake.TeamID || start.Get("thread_ts") != ts {
		t.Errorf("chat.startStream params %v", start)
	}
	close(pause)
	sa.waitTurns(s.ID, 1)
	waitFor(t, "the stream stopped", func() bool {
		ms := sa.streamed(ts)
		return len(ms) == 1 && !ms[0].Streaming
	})
	m := sa.streamed(ts)[0]
	if m.Text != longAnswer {
		t.Errorf("streamed text %q, want %q", m.Text, longAnswer)
	}
	if n := len(sa.slack.Calls("chat.stopStream")); n != 1 {
		t.Errorf("%d chat.stopStream calls, want 1", n)
	}
	for _, other := range sa.slack.Thread("C1", ts) {
		if !other.Streamed && strings.Contains(other.Text+string(other.Blocks), "first words") {
			t.Errorf("the answer was posted again: %+v", other)
		}
	}
	waitFor(t, "the agent session active", func() bool { return sa.slack.AgentStatus("C1", ts) == "active" })
}

// TestSlack_ToolStepsAsTaskUpdates: each tool call shows as a task update,
// running then complete with the first line of its result; its arguments
// (a token here) never reach Slack.
func TestSlack_ToolStepsAsTaskUpdates(t *testing.T) {
	sa := newSlackApp(t)
	const secretArg = "tok-9f8e7d6c5b4a"
	sa.fake.Push(
		fakemodel.TextAndTools("Let me look.", fakemodel.Call{Name: "lookup", Input: `{"q":"rows","token":"` + secretArg + `"}`}),
		fakemodel.Text("Found them."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> look it up", "")
	s := sa.session(ts)
	sa.waitTurns(s.ID, 1)
	waitFor(t, "the stream stopped", func() bool {
		ms := sa.streamed(ts)
		return len(ms) == 1 && !ms[0].Streaming
	})
	m := sa.streamed(ts)[0]
	if m.Text != "Let me look.\n\nFound them." {
		t.Errorf("streamed text %q", m.Text)
	}
	type task struct {
		Type, ID, Title, Status, Output string
	}
	var tasks []task
	for _, c := range m.Chunks {
		var tk task
		_ = json.Unmarshal(c, &tk)
		tasks = append(tasks, tk)
	}
	if len(tasks) != 2 || tasks[0].Title != "lookup" || tasks[0].Status != "in_progress" ||
		tasks[1].ID != tasks[0].ID || tasks[1].Status != "complete" || tasks[1].Output != "found 3 rows" {
		t.Fatalf("task updates %+v", tasks)
	}
	for _, c := range sa.slack.Calls("") {
		if strings.Contains(fmt.Sprint(c.Params), secretArg) {
			t.Errorf("%s carried the tool's arguments: %v", c.Method, c.Params)
		}
	}
}

// TestSlack_StopCancelsTheTurnOnce: Slack's Stop (agent_session_stopped)
// during a slow turn cancels it like the API's cancel: outcome cancelled,
// the open question closed, the thread told who stopped it; the same stop
// again (another event) changes nothing.
func TestSlack_StopCancelsTheTurnOnce(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(fakemodel.Hold())
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> take your time", "")
	s := sa.session(ts)
	if _, err := sa.fake.WaitRequests(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	stop := map[string]any{"type": "agent_session_stopped", "channel": "C1", "thread_ts": ts, "user": "U1", "event_ts": "1.2",
		"streaming_message_ts": []string{}}
	sa.agentEvent("EvStop1", stop)
	sa.waitThread(ts, "Stopped by <@U1>.")
	_, evs := sa.waitTurns(s.ID, 1)
	var outcome engine.Outcome
	for _, ev := range evs {
		if p, err := ev.Decode(); err == nil {
			if tc, ok := p.(engine.TurnCompleted); ok {
				outcome = tc.Outcome
			}
		}
	}
	if outcome != engine.OutcomeCancelled {
		t.Fatalf("turn outcome %q, want cancelled", outcome)
	}
	sa.agentEvent("EvStop2", stop)
	sa.waitEphemeral("U1", "Nothing is running")
	n := 0
	for _, m := range sa.slack.Thread("C1", ts) {
		if strings.Contains(m.Text+string(m.Blocks), "Stopped by") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d stop notices, want 1", n)
	}
}

// TestSlack_StopButtonWithoutAgentView: an app without the agent view
// (agents.sessions.setStatus refused) gets a Stop button on a status
// message; only the session's person may use it; it stops the turn and
// the message goes away.
func TestSlack_StopButtonWithoutAgentView(t *testing.T) {
	sa := newSlackApp(t)
	sa.slack.Fail("agents.sessions.setStatus", -1, "not_allowed_token_type")
	sa.fake.Push(fakemodel.Hold())
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> slow one", "")
	s := sa.session(ts)
	card := sa.waitThread(ts, "brain_stop")
	sa.click("U2", card, "brain_stop")
	sa.waitEphemeral("U2", "may stop it")
	if got, _ := sa.app.engine.Session(context.Background(), s.ID); got.Status != engine.StatusRunning {
		t.Fatalf("a stranger's click stopped the turn: %s", got.Status)
	}
	sa.click("U1", card, "brain_stop")
	sa.waitThread(ts, "Stopped by <@U1>.")
	sa.waitTurns(s.ID, 1)
	waitFor(t, "the Stop message removed", func() bool {
		_, ok := sa.slack.Message("C1", card.TS)
		return !ok
	})
}

// TestSlack_FallsBackWhenStreamingIsRefused: where chat.startStream is
// refused the answer is posted and updated in one message, complete at the
// end, and the workspace is not asked to stream again.
func TestSlack_FallsBackWhenStreamingIsRefused(t *testing.T) {
	sa := newSlackApp(t)
	sa.slack.Fail("chat.startStream", -1, "feature_not_enabled")
	pause := make(chan struct{})
	sa.fake.Push(fakemodel.Text(longAnswer).Slowly(8, 0).PauseAfter(4, pause), fakemodel.Text("Second answer."))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> explain", "")
	first := sa.waitThread(ts, "The first")
	if first.Streamed {
		t.Fatal("streamed although refused")
	}
	close(pause)
	s := sa.session(ts)
	sa.waitTurns(s.ID, 1)
	waitFor(t, "the whole answer in the message", func() bool {
		m, _ := sa.slack.Message("C1", first.TS)
		return strings.Contains(string(m.Blocks), "about the question.")
	})
	// The final reply carries its feedback buttons (issue 24, finding 10).
	waitFor(t, "feedback buttons under the updated answer", func() bool {
		m, _ := sa.slack.Message("C1", first.TS)
		return strings.Contains(string(m.Blocks), "feedback_buttons")
	})
	sa.message("Ev2", "message", "U1", "again", ts)
	second := sa.waitThread(ts, "Second answer.")
	waitFor(t, "feedback buttons under the second answer", func() bool {
		m, _ := sa.slack.Message("C1", second.TS)
		return strings.Contains(string(m.Blocks), "feedback_buttons")
	})
	if n := len(sa.slack.Calls("chat.startStream")); n != 1 {
		t.Fatalf("chat.startStream asked %d times, want once (the fallback is remembered)", n)
	}
	// Remembered in the database too, for the next start.
	if mode, ok, err := sa.app.store.WorkspaceMode(context.Background(), engine.OriginSlack, slackfake.TeamID); !ok || mode != "update" || err != nil {
		t.Errorf("stored workspace mode %q, %v, %v; want update", mode, ok, err)
	}
	for _, m := range sa.slack.Thread("C1", ts) {
		if m.TS != first.TS && strings.Contains(string(m.Blocks), "The first") {
			t.Errorf("the answer was posted twice: %+v", m)
		}
	}
}

// TestSlack_SuggestedPromptsAndTitle: a new assistant thread gets the
// agent's suggested prompts; its first request titles it (200 characters
// at most).
func TestSlack_SuggestedPromptsAndTitle(t *testing.T) {
	sa := newSlackAppAgent(t, "    slack: {suggested_prompts: [\"Summarise this channel\", \"What changed today?\"]}\n", "")
	const dm, thread = "D1", "1700000100.000100"
	sa.agentEvent("EvT1", map[string]any{"type": "assistant_thread_started", "event_ts": "1.1",
		"assistant_thread": map[string]any{"user_id": "U1", "channel_id": dm, "thread_ts": thread, "context": map[string]any{}}})
	waitFor(t, "suggested prompts", func() bool { return len(sa.slack.Prompts(dm, thread)) == 2 })
	if p := sa.slack.Prompts(dm, thread); p[0].Message != "Summarise this channel" || p[1].Title != "What changed today?" {
		t.Errorf("prompts %+v", p)
	}
	sa.fake.Push(fakemodel.Text("ok"))
	long := strings.Repeat("title words ", 30)
	body, _ := json.Marshal(map[string]any{"type": "event_callback", "team_id": slackfake.TeamID, "event_id": "EvM1",
		"event": map[string]any{"type": "message", "channel_type": "im", "user": "U1", "text": long, "ts": "1700000100.000200", "event_ts": "1700000100.000200", "thread_ts": thread, "channel": dm}})
	if st := sa.post("/slack/events", "application/json", body); st != 200 {
		t.Fatalf("status %d", st)
	}
	waitFor(t, "the title", func() bool { return sa.slack.Title(dm, thread) != "" })
	if got := []rune(sa.slack.Title(dm, thread)); len(got) > 200 || !strings.HasPrefix(string(got), "title words") {
		t.Errorf("title %q (%d runes)", string(got), len(got))
	}
}

// TestSlack_LongAnswerContinuesInANewMessage: streamed text beyond one
// message's 12,000 characters continues in a second streamed message; the
// two hold the whole answer, in order.
func TestSlack_LongAnswerContinuesInANewMessage(t *testing.T) {
	sa := newSlackApp(t)
	var b strings.Builder
	for i := 0; b.Len() < 15000; i++ {
		fmt.Fprintf(&b, "Sentence number %d of a very long answer. ", i)
	}
	answer := strings.TrimSpace(b.String())
	sa.fake.Push(fakemodel.Text(answer).Slowly(700, 0))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> write a lot", "")
	s := sa.session(ts)
	sa.waitTurns(s.ID, 1)
	waitFor(t, "two stopped streams", func() bool {
		ms := sa.streamed(ts)
		return len(ms) == 2 && !ms[0].Streaming && !ms[1].Streaming
	})
	ms := sa.streamed(ts)
	if n := len([]rune(ms[0].Text)); n > 12000 {
		t.Errorf("first message holds %d characters", n)
	}
	if ms[0].Text+ms[1].Text != answer {
		t.Errorf("the messages do not add up to the answer (%d + %d of %d)", len(ms[0].Text), len(ms[1].Text), len(answer))
	}
}

// TestSlack_FallsBackToTheFinalPost: where streaming and the live message
// are both refused, the answer arrives once, as the final post, and the
// workspace is remembered as posting only.
func TestSlack_FallsBackToTheFinalPost(t *testing.T) {
	sa := newSlackApp(t)
	sa.slack.Fail("chat.startStream", -1, "feature_not_enabled")
	sa.slack.Fail("chat.postMessage", 1, "invalid_blocks")
	// The model waits after its first words until the live message was
	// tried (and refused), so the refused post is the live one, never the
	// final one, however the machine schedules the turn.
	pause := make(chan struct{})
	sa.fake.Push(fakemodel.Text(longAnswer).Slowly(40, 0).PauseAfter(2, pause))
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> explain", "")
	waitFor(t, "the live message tried", func() bool { return len(sa.slack.Calls("chat.postMessage")) >= 1 })
	close(pause)
	s := sa.session(ts)
	sa.waitTurns(s.ID, 1)
	sa.waitThread(ts, "about the question.")
	n := 0
	for _, m := range sa.slack.Thread("C1", ts) {
		if strings.Contains(m.Text+string(m.Blocks), "The first words") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the answer shows %d times, want once", n)
	}
	// The final post carries the feedback buttons (issue 24, finding 10).
	if m := sa.waitThread(ts, "about the question."); !strings.Contains(string(m.Blocks), "feedback_buttons") {
		t.Errorf("the final post has no feedback buttons: %s", m.Blocks)
	}
	if mode, _, _ := sa.app.store.WorkspaceMode(context.Background(), engine.OriginSlack, slackfake.TeamID); mode != "post" {
		t.Errorf("stored workspace mode %q, want post", mode)
	}
}

// TestSlack_PlanAsTasks: the plan tool's checklist shows in the streamed
// message as a plan: its title, then one task per step with its status.
func TestSlack_PlanAsTasks(t *testing.T) {
	sa := newSlackApp(t)
	sa.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "plan", Input: `{"steps":[{"content":"Read the logs","status":"completed"},{"content":"Fix the bug","status":"inProgress"},{"content":"Ship it","status":"pending"}]}`}),
		fakemodel.Text("Working through the plan."),
	)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> plan it", "")
	s := sa.session(ts)
	sa.waitTurns(s.ID, 1)
	waitFor(t, "the stream stopped", func() bool {
		ms := sa.streamed(ts)
		return len(ms) == 1 && !ms[0].Streaming
	})
	var got []string
	for _, c := range sa.streamed(ts)[0].Chunks {
		var ch struct{ Type, ID, Title, Status string }
		_ = json.Unmarshal(c, &ch)
		if ch.Type == "plan_update" || strings.HasPrefix(ch.ID, "plan_") {
			got = append(got, ch.Type+":"+ch.Title+":"+ch.Status)
		}
	}
	want := []string{"plan_update:Plan:", "task_update:Read the logs:complete", "task_update:Fix the bug:in_progress", "task_update:Ship it:pending"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("plan chunks %q, want %q", got, want)
	}
}

// TestSlack_LiveReplyWaitsForTheSessionsDelivery: a live reply writes to
// Slack only while its replica holds the session's delivery (with
// replicas, another one may be delivering the session's earlier events):
// while the delivery lease is held elsewhere nothing streams; once it is
// let go the reply streams from its first words, ends as one stopped
// stream, and is never also posted whole.
func TestSlack_LiveReplyWaitsForTheSessionsDelivery(t *testing.T) {
	sa := newSlackApp(t)
	ts := sa.message("Ev1", "app_mention", "U1", "<@"+slackfake.BotUserID+"> hello", "")
	s := sa.session(ts)
	sa.waitTurns(s.ID, 1)
	waitFor(t, "the first reply stopped", func() bool {
		ms := sa.streamed(ts)
		return len(ms) == 1 && !ms[0].Streaming
	})

	// Another holder (as another replica would be) has the delivery.
	// (The first reply's delivery may still be finishing.)
	var release func()
	waitFor(t, "the delivery lease", func() bool {
		rel, held, err := sa.app.Engine().LeaseDelivery(context.Background(), engine.OriginSlack, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		release = rel
		return held
	})
	pause := make(chan struct{})
	pieces := make(chan int, 64) // more than the answer has pieces
	sa.fake.Push(fakemodel.Text(longAnswer).Slowly(8, 0).PauseAfter(4, pause).OnPiece(func(i int, _ string) { pieces <- i }))
	sa.message("Ev2", "message", "U1", "tell me more", ts)
	for i := range 4 {
		if got := <-pieces; got != i {
			t.Fatalf("piece %d flushed, want %d", got, i)
		}
	}
	// The words are with the replica; give its live loop a few rounds
	// to (wrongly) write them while the delivery is held elsewhere.
	for range 5 {
		time.Sleep(50 * time.Millisecond)
		if n := len(sa.streamed(ts)); n != 1 {
			t.Fatalf("%d streamed messages while the delivery was held elsewhere, want only the first reply", n)
		}
	}

	release()
	waitFor(t, "the second reply's first words", func() bool {
		ms := sa.streamed(ts)
		return len(ms) == 2 && ms[1].Streaming && strings.HasPrefix(ms[1].Text, "The first")
	})
	close(pause)
	sa.waitTurns(s.ID, 2)
	waitFor(t, "the second stream stopped", func() bool {
		ms := sa.streamed(ts)
		return len(ms) == 2 && !ms[1].Streaming
	})
	if m := sa.streamed(ts)[1]; m.Text != longAnswer {
		t.Errorf("streamed %q, want %q", m.Text, longAnswer)
	}
	for _, m := range sa.slack.Thread("C1", ts) {
		if !m.Streamed && strings.Contains(m.Text+string(m.Blocks), "first words") {
			t.Errorf("the answer was also posted whole: %+v", m)
		}
	}
}
