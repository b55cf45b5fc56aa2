package replicatest

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine/model/fakemodel"
	"brain/store/postgres/pgtest"
)

// streamAnswer is long enough to take several pieces, each thread's
// number first so no two threads' answers are alike.
func streamAnswer(n string) string {
	return "Answer " + n + ": the first words arrive at once, and the rest follows piece by piece until the model is done."
}

// TestReplicas_SlackRepliesStreamFromTheTurnsReplica: with three replicas
// on one PostgreSQL, a Slack reply streams into its thread from the
// replica running the turn, whichever replica received the event and
// whichever delivers the rest of the session: the first words are in
// Slack while the model is still writing, and each answer ends as exactly
// one stopped stream, never also posted whole by another replica.
func TestReplicas_SlackRepliesStreamFromTheTurnsReplica(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	bin := buildBrain(t, t.TempDir())

	// Every answer stops after four pieces until gate closes.
	gate := make(chan struct{})
	model := fakemodel.New(fakemodel.WithRecordLimit(0), fakemodel.WithDefault(fakemodel.Func(func(req fakemodel.Request) fakemodel.Step {
		_, rest, ok := strings.Cut(string(req.Messages), "[topic ")
		n, _, closed := strings.Cut(rest, "]")
		if !ok || !closed {
			return fakemodel.Text("ok")
		}
		return fakemodel.Text(streamAnswer(n)).Slowly(8, time.Millisecond).PauseAfter(4, gate)
	})))
	t.Cleanup(model.Close)
	tools := httptest.NewServer(&deployments{byService: map[string]int{}})
	t.Cleanup(tools.Close)
	slack := slackfake.New()
	t.Cleanup(slack.Close)
	gateOpen := false
	t.Cleanup(func() {
		if !gateOpen {
			close(gate)
		}
	})

	rc := rigConfig{dsn: dsn, modelURL: model.URL(), toolURL: tools.URL, slackURL: slack.URL()}
	reps := []*replica{startReplica(t, bin, "a", rc), startReplica(t, bin, "b", rc), startReplica(t, bin, "c", rc)}

	const threads = 6
	thread := func(n int) string { return fmt.Sprintf("1650000%03d.000100", n) }
	for n := range threads {
		ev := map[string]any{"type": "app_mention", "user": "U1", "ts": thread(n), "channel": "C1", "channel_type": "channel",
			"text": fmt.Sprintf("<@%s> [topic %d] explain", slackfake.BotUserID, n)}
		if err := reps[n%3].slackEvent(fmt.Sprintf("EvS%d", n), ev); err != nil {
			t.Fatal(err)
		}
	}
	streamed := func(ts string) []slackfake.Message {
		var out []slackfake.Message
		for _, m := range slack.Thread("C1", ts) {
			if m.Streamed {
				out = append(out, m)
			}
		}
		return out
	}
	// While every model is paused mid-answer, each thread shows its first
	// words in an open stream.
	for n := range threads {
		want := fmt.Sprintf("Answer %d:", n)
		waitFor(t, "the first words of thread "+thread(n)+" in Slack", func() bool {
			ms := streamed(thread(n))
			return len(ms) == 1 && ms[0].Streaming && strings.HasPrefix(ms[0].Text, want)
		})
	}
	close(gate)
	gateOpen = true

	store := openStore(t, dsn)
	elsewhere := 0 // turns run on another replica than the one the event reached
	for n := range threads {
		ts := thread(n)
		answer := streamAnswer(fmt.Sprint(n))
		waitFor(t, "the stream of thread "+ts+" stopped", func() bool {
			ms := streamed(ts)
			return len(ms) == 1 && !ms[0].Streaming
		})
		if m := streamed(ts)[0]; m.Text != answer {
			t.Errorf("thread %s streamed %q, want %q", ts, m.Text, answer)
		}
		s, err := store.SessionByThread(t.Context(), "slack:"+slackfake.TeamID+":C1:"+ts)
		if err != nil {
			t.Fatalf("thread %s: %v", ts, err)
		}
		waitFor(t, "session "+s.ID+" idle", func() bool { return sessionStatus(t, reps[0], s.ID) == "idle" })
		for _, m := range slack.Thread("C1", ts) {
			if !m.Streamed && strings.Contains(m.Text+string(m.Blocks), "first words") {
				t.Errorf("thread %s: the answer was also posted whole: %+v", ts, m)
			}
		}
		for i, r := range reps {
			if i != n%3 && ranTurn(r, s.ID) {
				elsewhere++
			}
		}
	}
	// Three stopStream calls per thread would mean three replicas
	// closed what one streamed.
	if got := len(slack.Calls("chat.stopStream")); got != threads {
		t.Errorf("%d chat.stopStream calls for %d threads", got, threads)
	}
	t.Logf("%d of %d turns ran on a replica other than the one the event reached", elsewhere, threads)
}

// ranTurn reports whether the replica's log shows a turn of the session.
func ranTurn(r *replica, sessionID string) bool {
	for _, line := range strings.Split(r.logs.String(), "\n") {
		if strings.Contains(line, "turn started") && strings.Contains(line, sessionID) {
			return true
		}
	}
	return false
}
