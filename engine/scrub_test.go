package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
)

// lockedBuffer collects log lines from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A secret that comes back from outside, from the provider or a tool, is
// recorded nowhere: not in events, not in approvals, not in the model's
// context, not in the log.
func TestEngine_SecretsFromOutsideAreScrubbed(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	logs := &lockedBuffer{}
	leaky := []tools.Definition{
		{Name: "leak", Description: "returns the secret",
			Run: func(ctx context.Context, c tools.Call) (json.RawMessage, error) {
				if err := c.ReportProgress(ctx, map[string]string{"token": secret}); err != nil {
					return nil, err
				}
				return json.RawMessage(`{"token":"` + secret + `"}`), nil
			}},
		{Name: "leak_error", Description: "fails with the secret",
			Run: func(context.Context, tools.Call) (json.RawMessage, error) {
				return nil, tools.Failed("401 for key %s", secret)
			}},
		{Name: "leak_plain_error", Description: "fails with the secret",
			Run: func(context.Context, tools.Call) (json.RawMessage, error) {
				return nil, errors.New("dial with " + secret)
			}},
		{Name: "leak_apply", Description: "proposes, then fails with the secret",
			Preview: func(context.Context, tools.Call) (tools.Card, error) {
				return tools.Card{Title: "Use " + secret, Facts: []tools.Fact{{Label: "key", Value: secret}}}, nil
			},
			Apply: func(context.Context, tools.Call, tools.Decision) (json.RawMessage, error) {
				return nil, tools.Failed("refused %s", secret)
			}},
	}
	h := newHarness(t, withTools(leaky...), func(c *engine.Config, _ *engine.Agent) {
		c.Scrubber = tools.NewScrubber(secret)
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	h.fake.Push(
		fakemodel.TextAndTools("The key is "+secret,
			fakemodel.Call{Name: "leak"}, fakemodel.Call{Name: "leak_error"}, fakemodel.Call{Name: "leak_plain_error"}, fakemodel.Call{Name: "leak_apply"}),
		fakemodel.Text("done"),
		fakemodel.Fail(401, "invalid x-api-key: "+secret),
	)
	s := h.session()
	h.send(s.ID, "leak everything")
	h.waitTurns(s.ID, 1)
	pending, err := h.eng.Approvals(context.Background(), engine.ApprovalFilter{SessionID: s.ID})
	if err != nil || len(pending) != 1 {
		t.Fatalf("approvals %v %+v", err, pending)
	}
	if _, err := h.eng.Decide(context.Background(), pending[0].ID, engine.Decision{Approve: true, By: "tester"}); err != nil {
		t.Fatal(err)
	}
	h.waitFor(s.ID, "apply failed", func(_ engine.Session, evs []engine.Event) bool { return count(evs, engine.EventApprovalFailed) == 1 })
	h.send(s.ID, "once more")
	_, evs := h.waitFor(s.ID, "failed", func(s engine.Session, _ []engine.Event) bool { return s.Status == engine.StatusFailed })

	for _, ev := range evs {
		if strings.Contains(string(ev.Data), secret) {
			t.Errorf("event %d %s holds the secret: %s", ev.Seq, ev.Type, ev.Data)
		}
	}
	errs := sessionErrors(t, evs)
	if len(errs) != 1 || !strings.Contains(errs[0].Message, tools.Redacted) {
		t.Errorf("session errors %+v", errs)
	}
	a, err := h.eng.Approval(context.Background(), pending[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if doc, _ := json.Marshal(a); strings.Contains(string(doc), secret) {
		t.Errorf("approval holds the secret: %s", doc)
	}
	for i, req := range h.fake.Requests() {
		if strings.Contains(string(req.Raw), secret) {
			t.Errorf("model request %d holds the secret: %s", i, req.Raw)
		}
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the log holds the secret:\n%s", logs.String())
	}
	if !strings.Contains(string(h.fake.Requests()[1].Raw), tools.Redacted) {
		t.Errorf("the model was not told what the tools said: %s", h.fake.Requests()[1].Raw)
	}
}
