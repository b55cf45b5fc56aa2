package slack

import (
	"strings"
	"testing"
	"unicode/utf8"

	"brain/engine"
)

func testQuestion() engine.Question {
	return engine.Question{
		ID:   "q_1",
		Text: "Which **environment**?",
		Options: []engine.Option{
			{Label: "Staging", Value: "staging"},
			{Label: "Production " + strings.Repeat("x", 100), Value: "prod"},
			{Label: "Both", Value: "both"},
		},
	}
}

func TestPoster_PostQuestion(t *testing.T) {
	p, fake := newPoster(t)
	q := testQuestion()
	ts, err := p.PostQuestion(testCtx(t), testChannel, testThread, q, "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	m, ok := fake.Message(testChannel, ts)
	if !ok || m.ThreadTS != testThread {
		t.Fatalf("message = %+v", m)
	}
	if text := allText(t, m.Blocks); !strings.Contains(text, "Which *environment*?") {
		t.Errorf("question text = %q", text)
	}
	bs := buttons(t, m.Blocks)
	if len(bs) != len(q.Options) {
		t.Fatalf("%d buttons, want %d", len(bs), len(q.Options))
	}
	blocks := map[string]bool{}
	for i, b := range bs {
		if b.ActionID != ActionAnswer {
			t.Errorf("button %d action_id %q", i, b.ActionID)
		}
		if blocks[b.BlockID] {
			t.Errorf("button %d shares block %s", i, b.BlockID)
		}
		blocks[b.BlockID] = true
		if n := utf8.RuneCountInString(b.Text); n > maxButtonText {
			t.Errorf("button %d label has %d runes", i, n)
		}
		v, err := DecodeValue(b.ActionID, b.Value)
		want := ButtonValue{Session: "ses_1", Question: "q_1", Value: q.Options[i].Value}
		if err != nil || v != want {
			t.Errorf("button %d value %q decodes to %+v, %v; want %+v", i, b.Value, v, err, want)
		}
	}
	if bs[0].Text != "Staging" || !strings.HasSuffix(bs[1].Text, "…") || utf8.RuneCountInString(bs[1].Text) != maxButtonText {
		t.Errorf("labels = %q, %q", bs[0].Text, bs[1].Text)
	}
}

func TestPoster_QuestionWithoutOptions(t *testing.T) {
	p, fake := newPoster(t)
	ts, err := p.PostQuestion(testCtx(t), testChannel, testThread, engine.Question{ID: "q_2", Text: "What name?"}, "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fake.Message(testChannel, ts)
	if bs := buttons(t, m.Blocks); len(bs) != 0 {
		t.Errorf("buttons = %+v", bs)
	}
	if text := allText(t, m.Blocks); !strings.Contains(text, "Reply in this thread") {
		t.Errorf("text = %q", text)
	}
}

func TestPoster_CloseQuestion(t *testing.T) {
	p, fake := newPoster(t)
	ctx := testCtx(t)
	q := testQuestion()
	ts, err := p.PostQuestion(ctx, testChannel, testThread, q, "ses_1")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := fake.Message(testChannel, ts)
	if err := p.CloseQuestion(ctx, testChannel, ts, q, "*Staging* (chosen by <@U0OWNER>)"); err != nil {
		t.Fatal(err)
	}
	after, _ := fake.Message(testChannel, ts)
	if after.Updates != 1 || len(buttons(t, after.Blocks)) != 0 {
		t.Fatalf("after close: %d updates, buttons %+v", after.Updates, buttons(t, after.Blocks))
	}
	text := allText(t, after.Blocks)
	if !strings.Contains(text, "Which *environment*?") || !strings.Contains(text, "*Staging* (chosen by <@U0OWNER>)") {
		t.Errorf("closed text = %q", text)
	}
	old := blockIDs(t, before.Blocks)
	for id := range blockIDs(t, after.Blocks) {
		if old[id] {
			t.Errorf("block id %s reused on update", id)
		}
	}

	if err := p.CloseQuestion(ctx, testChannel, ts, q, "closed (timed out)"); err != nil {
		t.Fatal(err)
	}
	after, _ = fake.Message(testChannel, ts)
	if !strings.Contains(allText(t, after.Blocks), "closed (timed out)") {
		t.Errorf("closed text = %q", allText(t, after.Blocks))
	}
}

func TestDecodeValue(t *testing.T) {
	tests := []struct {
		action, value string
		want          ButtonValue
		wantErr       bool
	}{
		{ActionAnswer, `{"s":"S","q":"Q","v":"V"}`, ButtonValue{Session: "S", Question: "Q", Value: "V"}, false},
		{ActionAnswer, `{"s":"S","q":"Q"}`, ButtonValue{}, true},
		{ActionApprove, `{"a":"A"}`, ButtonValue{Approval: "A"}, false},
		{ActionDeny, `{"a":"A"}`, ButtonValue{Approval: "A"}, false},
		{ActionRetry, `{"a":"A"}`, ButtonValue{Approval: "A"}, false},
		{ActionDeny, `{"s":"S"}`, ButtonValue{}, true},
		{ActionResume, `{"s":"S"}`, ButtonValue{Session: "S"}, false},
		{ActionResume, `not json`, ButtonValue{}, true},
		{"other_action", `{"s":"S"}`, ButtonValue{}, true},
	}
	for _, tt := range tests {
		got, err := DecodeValue(tt.action, tt.value)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("DecodeValue(%s, %s) = %+v, %v", tt.action, tt.value, got, err)
		}
	}
	long := ButtonValue{Session: "S", Question: "Q", Value: strings.Repeat("v", maxValue)}
	if _, err := encodeValue(long); err == nil {
		t.Error("a value over 2000 bytes was accepted")
	}
}
