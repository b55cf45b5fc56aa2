package bot

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"brain/bot/api/client"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
)

func TestDaemon_ApprovalsAndSessionActionsThroughTheAPI(t *testing.T) {
	var applied atomic.Int64
	deploy := tools.Definition{
		Name: "deploy", Description: "Deploy", Input: json.RawMessage(`{"type":"object"}`),
		Preview: func(ctx context.Context, c tools.Call) (tools.Card, error) {
			return tools.Card{Title: "Deploy checkout", Facts: []tools.Fact{{Label: "Env", Value: "prod"}}}, nil
		},
		Apply: func(ctx context.Context, c tools.Call, d tools.Decision) (json.RawMessage, error) {
			applied.Add(1)
			return json.RawMessage(`{"ok":true}`), nil
		},
	}
	ta := newTestApp(t, "    tools: [deploy]\napi_keys: [{name: ops, key: daemon-client-key-123456-0f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f, act_for: true}]\n", Options{Tools: []tools.Definition{deploy}})
	cfg := *ta.app.cfg
	cfg.Listen = ta.app.Addr()
	d, err := client.Dial(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ta.fake.Push(fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{}`}), fakemodel.Text("Waiting for approval."))
	var s engine.Session
	ta.must(201, "POST", "/v1/sessions", map[string]any{"agent": "default", "started_by": "ann"}, &s)
	if _, err := d.Send(ctx, s.ID, "deploy it", "ann"); err != nil {
		t.Fatal(err)
	}
	ta.waitTurns(s.ID, 1)

	list, err := d.Approvals(ctx, "pending")
	if err != nil || len(list) != 1 || list[0].Card.Title != "Deploy checkout" {
		t.Fatalf("approvals %+v, %v", list, err)
	}
	got, err := d.Approval(ctx, list[0].ID)
	if err != nil || got.ID != list[0].ID {
		t.Fatalf("approval %+v, %v", got, err)
	}
	if _, err := d.Decide(ctx, got.ID, true, "ann"); err != nil {
		t.Fatal(err)
	}
	if a := ta.waitApproval(got.ID, engine.ApprovalApplied); a.DecidedBy != "ann" || applied.Load() != 1 {
		t.Fatalf("after approve: %+v, applied %d", a, applied.Load())
	}
	// A second decision is the daemon's conflict, with its code.
	_, err = d.Decide(ctx, got.ID, false, "ann")
	if code := engine.CodeOf(err); code != engine.CodeConflict {
		t.Fatalf("second decision: %v (code %q)", err, code)
	}
	if s, err := d.Cancel(ctx, s.ID); err != nil || s.Status != engine.StatusIdle {
		t.Fatalf("cancel: %+v, %v", s, err)
	}
	if s, err := d.Resume(ctx, s.ID); err != nil || s.Status != engine.StatusIdle {
		t.Fatalf("resume: %+v, %v", s, err)
	}
	if _, err := d.Approval(ctx, "apr_missing"); engine.CodeOf(err) != engine.CodeNotFound {
		t.Fatalf("missing approval: %v", err)
	}

	// A daemon that is not running says so.
	cfg.Listen = "127.0.0.1:1"
	down, _ := client.Dial(&cfg)
	if _, err := down.Approvals(ctx, ""); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("no daemon: %v", err)
	}
}
