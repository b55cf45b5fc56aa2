package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"brain/engine"
)

// groupsFunc is a fake engine.Groups.
type groupsFunc func(ctx context.Context, group string) ([]string, error)

func (f groupsFunc) Members(ctx context.Context, group string) ([]string, error) {
	return f(ctx, group)
}

var _ engine.Groups = groupsFunc(nil)

// TestEngine_ApproverGroups: a member of a group entry may decide, a
// non-member may not, and a group that cannot be read grants nothing.
func TestEngine_ApproverGroups(t *testing.T) {
	d := &deployTool{}
	var asked []string
	groups := groupsFunc(func(ctx context.Context, group string) ([]string, error) {
		asked = append(asked, group)
		if group == "subteam:SBROKEN" {
			return nil, errors.New("slack is down")
		}
		return []string{"U7"}, nil
	})
	h := newHarness(t, withTools(d.def()), func(c *engine.Config, a *engine.Agent) {
		c.Groups = groups
		a.Approvers = []string{"ops", "subteam:SBROKEN", "subteam:S1"}
	})
	s := h.session()
	a := propose(t, h, s)
	if err := h.eng.MayDecideApproval(context.Background(), a, "U8"); !errors.Is(err, &engine.Error{Code: engine.CodeForbidden}) {
		t.Fatalf("non-member: %v", err)
	}
	if err := h.eng.MayDecideApproval(context.Background(), a, "tester"); err == nil {
		t.Fatal("the starter may decide although approvers are configured")
	}
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "U8"}); !errors.Is(err, &engine.Error{Code: engine.CodeForbidden}) {
		t.Fatalf("non-member decided: %v", err)
	}
	if _, err := h.eng.Decide(context.Background(), a.ID, engine.Decision{Approve: true, By: "U7"}); err != nil {
		t.Fatalf("member: %v", err)
	}
	if strings.Join(asked, ",") == "" || strings.Contains(strings.Join(asked, ","), "ops") {
		t.Errorf("groups asked for %q (plain ids must not be)", asked)
	}
}

// filesFunc is a fake engine.Files.
type filesFunc func(ctx context.Context, ref engine.FileRef) (engine.Attachment, error)

func (f filesFunc) Load(ctx context.Context, ref engine.FileRef) (engine.Attachment, error) {
	return f(ctx, ref)
}

// TestEngine_FilesReachTheModel: a message with files (and no text) runs a
// turn; stored files go through Files, refs with an error or a lost file
// become notes; every turn loads them again from Files.
func TestEngine_FilesReachTheModel(t *testing.T) {
	var loads atomic.Int64
	files := filesFunc(func(ctx context.Context, ref engine.FileRef) (engine.Attachment, error) {
		loads.Add(1)
		if ref.Hash == "lost" {
			return engine.Attachment{}, errors.New("gone")
		}
		return engine.Attachment{Name: ref.Name, Text: "CONTENT OF " + ref.Name}, nil
	})
	h := newHarness(t, func(c *engine.Config, _ *engine.Agent) { c.Files = files })
	s := h.session()
	_, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Author: "tester", Files: []engine.FileRef{
		{Hash: "h1", Name: "a.txt", Size: 3, Type: "text/plain"},
		{Name: "big.bin", Size: 1 << 30, Error: "it is too large"},
		{Hash: "lost", Name: "gone.txt", Size: 4, Type: "text/plain"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.waitTurns(s.ID, 1)
	raw := string(h.fake.Requests()[0].Messages)
	for _, w := range []string{"CONTENT OF a.txt", `big.bin`, "it is too large", `gone.txt`, "could not be loaded"} {
		if !strings.Contains(raw, w) {
			t.Errorf("model context lacks %q: %s", w, raw)
		}
	}
	h.send(s.ID, "again")
	h.waitTurns(s.ID, 2)
	if !strings.Contains(string(h.fake.Requests()[1].Messages), "CONTENT OF a.txt") {
		t.Error("the second turn lost the file")
	}
	if n := loads.Load(); n != 4 {
		t.Errorf("Files.Load called %d times, want 4 (two stored refs, two turns)", n)
	}
	if _, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Author: "tester"}); !errors.Is(err, &engine.Error{Code: engine.CodeInvalid}) {
		t.Errorf("input with neither text nor files: %v", err)
	}
}

// TestEngine_RecordFeedback: feedback is a feedback.given event and a
// counter; bad ratings are refused; the model never sees it.
func TestEngine_RecordFeedback(t *testing.T) {
	h := newHarness(t)
	s := h.session()
	h.send(s.ID, "hi")
	_, evs := h.waitTurns(s.ID, 1)
	var reply engine.Event
	for _, ev := range evs {
		if ev.Type == engine.EventAgentMessage {
			reply = ev
		}
	}
	ev, err := h.eng.RecordFeedback(context.Background(), s.ID, engine.FeedbackGiven{By: "U1", MessageID: reply.ID, Rating: engine.FeedbackPositive, Source: "slack"})
	if err != nil || ev.Type != engine.EventFeedbackGiven {
		t.Fatalf("record: %+v %v", ev, err)
	}
	p, err := ev.Decode()
	if fg, ok := p.(engine.FeedbackGiven); err != nil || !ok || fg.By != "U1" || fg.MessageID != reply.ID {
		t.Fatalf("decoded %+v %v", p, err)
	}
	if _, err := h.eng.RecordFeedback(context.Background(), s.ID, engine.FeedbackGiven{By: "U1", MessageID: reply.ID, Rating: "meh"}); !errors.Is(err, &engine.Error{Code: engine.CodeInvalid}) {
		t.Errorf("bad rating: %v", err)
	}
	if _, err := h.eng.RecordFeedback(context.Background(), "ses_nope", engine.FeedbackGiven{By: "U1", MessageID: "x", Rating: engine.FeedbackNegative}); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if got := h.eng.Stats().Counters["feedback_positive"]; got != 1 {
		t.Errorf("feedback_positive = %d", got)
	}
	h.send(s.ID, "next")
	h.waitTurns(s.ID, 2)
	if strings.Contains(string(h.fake.Requests()[1].Messages), "positive") {
		t.Error("feedback reached the model")
	}
}

// TestEngine_FileBudget: within FileBudget the newest files are sent;
// an older one beyond it is named only.
func TestEngine_FileBudget(t *testing.T) {
	files := filesFunc(func(ctx context.Context, ref engine.FileRef) (engine.Attachment, error) {
		return engine.Attachment{Name: ref.Name, Text: "CONTENT OF " + ref.Name}, nil
	})
	h := newHarness(t, func(c *engine.Config, _ *engine.Agent) { c.Files, c.FileBudget = files, 25 })
	s := h.session()
	for i, name := range []string{"old.txt", "mid.txt", "new.txt"} {
		_, _, err := h.eng.Send(context.Background(), s.ID, engine.Input{Author: "tester", Text: name,
			Files: []engine.FileRef{{Hash: "h" + name, Name: name, Size: 10, Type: "text/plain"}}})
		if err != nil {
			t.Fatal(err)
		}
		h.waitTurns(s.ID, i+1)
	}
	raw := string(h.fake.Requests()[2].Messages)
	for _, w := range []string{"CONTENT OF mid.txt", "CONTENT OF new.txt", `old.txt`, "not sent again"} {
		if !strings.Contains(raw, w) {
			t.Errorf("third request lacks %q: %s", w, raw)
		}
	}
	if strings.Contains(raw, `{"text":"CONTENT OF old.txt","type":"text"}`) {
		t.Errorf("a file beyond the budget was sent: %s", raw)
	}
}
