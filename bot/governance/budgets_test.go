package governance_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"brain/bot/audit"
	"brain/bot/config"
	"brain/bot/governance"
	"brain/engine"
	"brain/store"
	"brain/store/sqlite"
)

// callUsage is what each model call of the fake model spends: 200 tokens.
var callUsage = engine.Usage{InputTokens: 150, OutputTokens: 50}

// model answers every call with text and callUsage.
type model struct{ calls atomic.Int64 }

func (m *model) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	n := m.calls.Add(1)
	return engine.ModelResponse{Model: "fake", Text: fmt.Sprintf("answer %d", n), StopReason: "end_turn", Usage: callUsage}, nil
}

type rig struct {
	store   store.Store
	engine  *engine.Engine
	budgets *governance.Budgets
	model   *model
}

var t0 = time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)

func newRig(t *testing.T, st store.Store, limits []config.BudgetConfig) *rig {
	t.Helper()
	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Millisecond); return now }
	var ids atomic.Int64
	r := &rig{store: st, model: &model{}}
	r.budgets = &governance.Budgets{Store: st, Limits: limits, Raisers: "an admin (console.admins: U0)",
		Audit: &audit.Recorder{Store: st, Now: clock}, Now: clock}
	e, err := engine.New(engine.Config{
		Store: st, Agents: []*engine.Agent{{Name: "default", Model: r.model}},
		Clock: clock, NewID: func(p string) string { return fmt.Sprintf("%s_%d", p, ids.Add(1)) },
		Spend: r.budgets,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop(context.Background()) })
	r.engine = e
	return r
}

func openSQLite(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "brain.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// settle waits until the session has no turn running and no input queued.
func settle(t *testing.T, e *engine.Engine, id string) engine.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		ch := e.Changed(id)
		s, err := e.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != engine.StatusRunning && (s.Status != engine.StatusIdle || s.InputCursor == lastInput(t, e, id)) {
			return s
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond): // another replica may commit it: look again
		case <-ctx.Done():
			t.Fatalf("session %s did not settle: %+v", id, s)
		}
	}
}

func lastInput(t *testing.T, e *engine.Engine, id string) int64 {
	t.Helper()
	evs, err := e.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, ev := range evs {
		if ev.Type == engine.EventUserMessage {
			last = ev.Seq
		}
	}
	return last
}

func texts(t *testing.T, e *engine.Engine, id, typ string) []string {
	t.Helper()
	evs, err := e.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Type != typ {
			continue
		}
		p, err := ev.Decode()
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case engine.AgentMessage:
			out = append(out, p.Text)
		case engine.SessionError:
			out = append(out, p.Code+": "+p.Message)
		}
	}
	return out
}

// TestBudgets_NoticeStopRaiseRetry: a person's daily budget of 1000 tokens
// (five calls of 200) gives the 80% notice once, stops the sixth turn with
// budget_exceeded naming the budget, its reset and who can raise it; an
// admin's raise (audited) lets resume with retry run the stopped message.
func TestBudgets_NoticeStopRaiseRetry(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, openSQLite(t), []config.BudgetConfig{{Scope: "person", Period: "day", Tokens: 1000}})
	s, _, _, err := r.engine.CreateSessionWithInput(ctx, engine.NewSession{Agent: "default", Origin: engine.OriginAPI, Interactive: true, StartedBy: "U1"},
		engine.Input{Text: "turn 1"})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, r.engine, s.ID)
	for i := 2; i <= 6; i++ {
		if _, _, err := r.engine.Send(ctx, s.ID, engine.Input{Text: fmt.Sprintf("turn %d", i)}); err != nil {
			t.Fatal(err)
		}
		settle(t, r.engine, s.ID)
	}
	got := settle(t, r.engine, s.ID)
	if got.Status != engine.StatusInterrupted {
		t.Fatalf("status after 6 turns = %s, want interrupted", got.Status)
	}
	if n := r.model.calls.Load(); n != 5 {
		t.Errorf("model calls = %d, want 5 (the sixth stopped before its call)", n)
	}
	var notices []string
	for _, m := range texts(t, r.engine, s.ID, engine.EventAgentMessage) {
		if strings.HasPrefix(m, "Budget notice") {
			notices = append(notices, m)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "800 of 1000 tokens") {
		t.Errorf("notices = %q; want one at 800 of 1000", notices)
	}
	errs := texts(t, r.engine, s.ID, engine.EventSessionError)
	if len(errs) != 1 {
		t.Fatalf("session errors = %q, want one", errs)
	}
	for _, want := range []string{engine.CodeBudgetExceeded + ":", "daily budget of person U1", "1000 of 1000 tokens", "resets at 2025-06-02 00:00 UTC", "console.admins: U0", "resume with retry"} {
		if !strings.Contains(errs[0], want) {
			t.Errorf("stop message %q lacks %q", errs[0], want)
		}
	}

	if err := r.budgets.Raise(ctx, store.BudgetLimit{Scope: "person", Subject: "U1", Period: "day", Tokens: 2000, SetBy: "U0"}); err == nil {
		t.Error("Raise without a reason succeeded")
	}
	if err := r.budgets.Raise(ctx, store.BudgetLimit{Scope: "person", Subject: "U1", Period: "day", Tokens: 2000, SetBy: "U0", Reason: "launch week"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.engine.ResumeWith(ctx, s.ID, engine.ResumeOptions{Retry: true}); err != nil {
		t.Fatal(err)
	}
	got = settle(t, r.engine, s.ID)
	if got.Status != engine.StatusIdle || r.model.calls.Load() != 6 {
		t.Errorf("after raise and retry: status %s, %d calls; want idle, 6", got.Status, r.model.calls.Load())
	}
	msgs := texts(t, r.engine, s.ID, engine.EventAgentMessage)
	if last := msgs[len(msgs)-1]; last != "answer 6" {
		t.Errorf("last message = %q, want the retried turn's answer", last)
	}
	named, err := r.budgets.Named(ctx)
	if err != nil || len(named) != 1 || named[0].Subject != "U1" || named[0].Tokens != 2000 || named[0].SpentTokens != 1200 || named[0].SetBy != "U0" {
		t.Errorf("Named = %+v, %v; want U1's raised day budget, 1200 of 2000 spent", named, err)
	}
	entries, err := r.store.AuditEntries(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Action != audit.ActionBudgetOverride || entries[0].Actor != "U0" ||
		!strings.Contains(string(entries[0].Detail), "launch week") {
		t.Errorf("audit = %+v; want the override with its reason", entries)
	}
}

// TestRetention_PrunesInBatches: expired audit entries and spend go in
// batches, what is kept still verifies, and the run is audited.
func TestRetention_PrunesInBatches(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t)
	for i := range 25 {
		at := t0.Add(time.Duration(i) * time.Hour)
		if _, err := st.AppendAudit(ctx, store.AuditRecord{At: at, Actor: "U1", Action: "console.signed_in", Target: "console"}); err != nil {
			t.Fatal(err)
		}
		if err := st.RecordSpend(ctx, store.SpendRecord{At: at.Add(-90 * 24 * time.Hour), SessionID: "s", Person: "U1", Tokens: 1}); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(30 * time.Hour)
	clock := func() time.Time { return now }
	r := &governance.Retention{Store: st, Audit: 10 * time.Hour, Batch: 4, Trail: &audit.Recorder{Store: st, Now: clock}, Now: clock}
	if err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	es, err := st.AuditEntries(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// Entries at t0+20h.. are within 10h of now; 0..19 went.
	if es[0].Seq != 21 || len(es) != 6 {
		t.Fatalf("kept seqs %d..%d (%d), want 21..26", es[0].Seq, es[len(es)-1].Seq, len(es))
	}
	last := es[len(es)-1]
	if last.Action != audit.ActionDeleted || !strings.Contains(string(last.Detail), `"audit_entries":20`) || !strings.Contains(string(last.Detail), `"spend_records":25`) {
		t.Errorf("retention entry = %+v", last)
	}
	if rep, err := audit.VerifyStore(ctx, st); err != nil || rep.Break != nil {
		t.Errorf("verify after pruning: %s, %v", rep.Describe(), err)
	}
	if tok, _, _ := st.SpentSince(ctx, store.SpendPerson, "U1", time.Time{}); tok != 0 {
		t.Errorf("spend left: %d tokens", tok)
	}
}
