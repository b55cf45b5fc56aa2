package slack

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"brain/channels/slack/slackfake"
	"brain/engine"
	"brain/engine/enginetest"
	"brain/store"
)

var _ Approvals = (*enginetest.Events)(nil)

// memPosted is an in-memory store.PostedMessages.
type memPosted struct {
	cards     map[string]string
	questions map[string]store.PostedQuestion
}

var _ store.PostedMessages = (*memPosted)(nil)

func (m *memPosted) ApprovalMessage(_ context.Context, platform engine.Origin, id string) (string, bool, error) {
	ref, ok := m.cards[string(platform)+"/"+id]
	return ref, ok, nil
}

func (m *memPosted) SetApprovalMessage(_ context.Context, _ time.Time, platform engine.Origin, id, ref string) error {
	m.cards[string(platform)+"/"+id] = ref
	return nil
}

func (m *memPosted) PostedQuestion(_ context.Context, platform engine.Origin, sessionID string) (store.PostedQuestion, bool, error) {
	q, ok := m.questions[string(platform)+"/"+sessionID]
	return q, ok, nil
}

func (m *memPosted) SetPostedQuestion(_ context.Context, _ time.Time, platform engine.Origin, sessionID string, q store.PostedQuestion) error {
	m.questions[string(platform)+"/"+sessionID] = q
	return nil
}

func (m *memPosted) ClearPostedQuestion(_ context.Context, platform engine.Origin, sessionID string) error {
	delete(m.questions, string(platform)+"/"+sessionID)
	return nil
}

// TestRenderer_Render renders a session's events into its thread: the
// reply, the question (closed with the answer), the approval card (updated
// once decided) and one error notice; an unreadable event is skipped.
func TestRenderer_Render(t *testing.T) {
	p, fake := newPoster(t)
	evs := &enginetest.Events{}
	posted := &memPosted{cards: map[string]string{}, questions: map[string]store.PostedQuestion{}}
	r := &Renderer{Engine: evs, Store: posted, Poster: p, Now: time.Now, Log: p.log}
	s := engine.Session{ID: "ses_1", Origin: engine.OriginSlack, ThreadKey: "slack:T1:" + testChannel + ":" + testThread}
	q := engine.Question{ID: "q1", Text: "Which colour?", Options: []engine.Option{{Label: "Blue", Value: "blue"}, {Label: "Red", Value: "red"}}}
	evs.Add(t,
		engine.TurnStarted{},
		engine.AgentMessage{Text: "Hello there."},
		q,
		engine.Input{Text: "Blue", Author: "U0OWNER", Answer: &engine.Answer{QuestionID: "q1", Value: "blue", Text: "Blue <!here>"}},
	)
	evs.AddEvent(engine.Event{Type: engine.EventAgentMessage, Data: json.RawMessage(`{"text":`)})
	a := testApproval()
	evs.SetApproval(a)
	evs.Add(t, engine.ApprovalRequested{ApprovalID: a.ID})

	ctx := testCtx(t)
	render := func(ev engine.Event) error { return r.Render(ctx, s, ev) }
	last := evs.RenderAfter(t, 0, render)
	thread := fake.Thread(testChannel, testThread)
	var texts []string
	for _, m := range thread {
		texts = append(texts, m.Text+" "+string(m.Blocks))
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"Hello there.", "Answered by <@U0OWNER>: *Blue &lt;!here&gt;*", "Create issue in acme/api"} {
		if !strings.Contains(all, want) {
			t.Errorf("thread lacks %q:\n%s", want, all)
		}
	}
	if _, open := posted.questions[string(engine.OriginSlack)+"/ses_1"]; open {
		t.Error("the answered question is still recorded as open")
	}
	cardTS, ok := posted.cards[string(engine.OriginSlack)+"/"+a.ID]
	if !ok {
		t.Fatal("the approval card was not recorded")
	}

	// The decision updates the card in place; the stop posts its error
	// (with Resume) and a notice naming the message it left unanswered.
	a.Status, a.DecidedBy = engine.ApprovalDenied, "U0OWNER"
	evs.SetApproval(a)
	evs.Add(t,
		engine.ApprovalDecided{ApprovalID: a.ID, By: "U0OWNER", Decision: engine.DecisionDeny},
		engine.SessionError{Code: "provider_timeout", InputID: "evt_in1", Input: "check the api", Message: "The model timed out."},
		engine.SessionError{Code: engine.CodeInputCancelled, InputID: "evt_in2", Input: "and deploy it <!channel> [x](https://evil.example)", Message: "not run: the session stopped first"},
		engine.TurnCompleted{Outcome: engine.OutcomeCompleted},
	)
	before := len(fake.Thread(testChannel, testThread))
	evs.RenderAfter(t, last, render)
	card, _ := fake.Message(testChannel, cardTS)
	if card.Updates != 1 || !strings.Contains(allText(t, card.Blocks), "denied by <@U0OWNER>") {
		t.Errorf("card after the decision: %d updates, %q", card.Updates, allText(t, card.Blocks))
	}
	thread = fake.Thread(testChannel, testThread)
	if added := len(thread) - before; added != 2 {
		t.Fatalf("%d messages for two session errors, want the error and the not-answered notice", added)
	}
	notice := thread[len(thread)-1]
	if text := allText(t, notice.Blocks); !strings.Contains(text, "`and deploy it <!channel> [x](https://evil.example)` was not run: the session stopped first") {
		t.Errorf("notice %q does not name the unanswered message", text)
	}
	if live := slackfake.LiveSequences(notice); len(live) != 0 {
		t.Errorf("the notice quotes the message live: %q", live)
	}
}

// TestRenderer_CancelClosesQuestion: a cancel closes the open question's
// buttons.
func TestRenderer_CancelClosesQuestion(t *testing.T) {
	p, fake := newPoster(t)
	evs := &enginetest.Events{}
	posted := &memPosted{cards: map[string]string{}, questions: map[string]store.PostedQuestion{}}
	r := &Renderer{Engine: evs, Store: posted, Poster: p, Now: time.Now, Log: p.log}
	s := engine.Session{ID: "ses_2", Origin: engine.OriginSlack, ThreadKey: "slack:T1:" + testChannel + ":" + testThread}
	evs.Add(t,
		engine.Question{ID: "q1", Text: "Go on?", Options: []engine.Option{{Label: "Yes", Value: "yes"}}},
		engine.SessionStatus{Status: engine.StatusIdle, Reason: engine.ReasonCancelled},
	)
	evs.RenderAfter(t, 0, func(ev engine.Event) error { return r.Render(testCtx(t), s, ev) })
	thread := fake.Thread(testChannel, testThread)
	if len(thread) != 1 || !strings.Contains(allText(t, thread[0].Blocks), "closed (cancelled)") {
		t.Fatalf("thread %+v: want the question, closed (cancelled)", thread)
	}
}

// TestRenderer_NotASlackThread: a session whose thread key is not Slack's
// is left alone.
func TestRenderer_NotASlackThread(t *testing.T) {
	r := &Renderer{Engine: &enginetest.Events{}} // no Poster: posting would panic
	ev, err := engine.NewEvent(engine.AgentMessage{Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Render(context.Background(), engine.Session{ID: "s", ThreadKey: "linear:abc"}, ev); err != nil {
		t.Fatalf("Render = %v", err)
	}
}

func TestSplitThreadKey(t *testing.T) {
	for key, want := range map[string][3]string{
		"slack:T1:C1:1700000000.000100": {"C1", "1700000000.000100", "ok"},
		"slack:T1:C1":                   {"", "", ""},
		"linear:T1:C1:1":                {"", "", ""},
		"slack:T1:C1:1:2":               {"", "", ""},
	} {
		ch, ts, ok := splitThreadKey(key)
		okText := ""
		if ok {
			okText = "ok"
		}
		if got := [3]string{ch, ts, okText}; got != want {
			t.Errorf("splitThreadKey(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestRenderer_ApprovalCopiesPostedOnceAndAllUpdated: a card goes to the
// thread, the approvers' channel and each approver's DM; delivering the
// request again (a retry after a crash) posts no second copy, and an update
// reaches every copy.
func TestRenderer_ApprovalCopiesPostedOnceAndAllUpdated(t *testing.T) {
	p, fake := newPoster(t)
	evs := &enginetest.Events{}
	posted := &memPosted{cards: map[string]string{}, questions: map[string]store.PostedQuestion{}}
	r := &Renderer{Engine: evs, Store: posted, Poster: p, Now: time.Now, Log: p.log,
		Audience: Audience{Channel: "C0APPR", DMs: func(agent string) []string {
			if agent != "ops" {
				t.Errorf("DMs asked for agent %q", agent)
			}
			return []string{"U0ANN", "not-a-user", "U0BOB"}
		}}}
	s := engine.Session{ID: "ses_1", Agent: "ops", Origin: engine.OriginSlack, ThreadKey: "slack:T1:" + testChannel + ":" + testThread}
	a := testApproval()
	evs.SetApproval(a)
	evs.Add(t, engine.ApprovalRequested{ApprovalID: a.ID})
	ctx := testCtx(t)
	render := func(ev engine.Event) error { return r.Render(ctx, s, ev) }
	last := evs.RenderAfter(t, 0, render)
	evs.RenderAfter(t, 0, render) // delivered again
	where := map[string]int{}
	for _, ch := range []string{testChannel, "C0APPR", "DU0ANN", "DU0BOB"} {
		for _, m := range fake.Messages(ch) {
			if strings.Contains(string(m.Blocks), "Create issue in acme/api") {
				where[ch]++
			}
		}
	}
	if len(where) != 4 || where[testChannel] != 1 || where["C0APPR"] != 1 || where["DU0ANN"] != 1 || where["DU0BOB"] != 1 {
		t.Fatalf("cards per channel %v; want one in the thread, the approvers' channel and each DM", where)
	}
	ref := posted.cards[string(engine.OriginSlack)+"/"+a.ID]
	if copies := parseCopies(ref, testChannel); len(copies) != 4 || copies[0].channel != testChannel {
		t.Fatalf("stored ref %q", ref)
	}

	a.Status, a.DecidedBy = engine.ApprovalDenied, "U0ANN"
	evs.SetApproval(a)
	evs.Add(t, engine.ApprovalDecided{ApprovalID: a.ID, By: "U0ANN", Decision: engine.DecisionDeny})
	evs.RenderAfter(t, last, render)
	for _, c := range parseCopies(ref, testChannel) {
		m, _ := fake.Message(c.channel, c.ts)
		if m.Updates != 1 || !strings.Contains(allText(t, m.Blocks), "denied by <@U0ANN>") {
			t.Errorf("copy in %s: %d updates, %q", c.channel, m.Updates, allText(t, m.Blocks))
		}
	}
}
