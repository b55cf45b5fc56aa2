package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/engine"
	"brain/store/sqlite"
	"brain/tools"
)

// The wire fixture is the event log of wireScenario, which drives every
// event writer of the engine on a real SQLite file, as the current writers
// write it. TestWire_WritersMatchFixture keeps the writers byte-compatible
// with it; TestWire_FixtureRoundTrips keeps the codec able to read it.
// Rewrite it (-update) only for a deliberate wire change.
//
// The legacy fixture is the same scenario's log as brain 87c6032 wrote it,
// before event payloads were typed and before brain minted its own tool
// call ids: the shape older databases hold. It is never rewritten;
// TestWire_LegacyFixtureDecodes keeps the codec able to read it.
const (
	wireFixture   = "testdata/events.txt"
	legacyFixture = "testdata/events-87c6032.txt"
)

var updateWire = flag.Bool("update", false, "rewrite "+wireFixture+" from the current writers")

func TestWire_WritersMatchFixture(t *testing.T) {
	got := wireScenario(t)
	if *updateWire {
		if err := os.MkdirAll(filepath.Dir(wireFixture), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(wireFixture, []byte(formatWire(got)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readWire(t, wireFixture)
	if len(got) != len(want) {
		t.Errorf("%d events, fixture has %d", len(got), len(want))
	}
	for i := 0; i < len(got) && i < len(want); i++ {
		if g, w := formatWire(got[i:i+1]), formatWire(want[i:i+1]); g != w {
			t.Errorf("event %d:\n got %s\nwant %s", i+1, g, w)
		}
	}
}

// formatWire writes fixture lines, one per event: "SEQ TYPE TURN_ID DATA"
// ("-" for no turn). DATA is the JSON exactly as stored.
func formatWire(evs []engine.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		turn := ev.TurnID
		if turn == "" {
			turn = "-"
		}
		fmt.Fprintf(&b, "%d %s %s %s\n", ev.Seq, ev.Type, turn, ev.Data)
	}
	return b.String()
}

func readWire(t *testing.T, path string) []engine.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []engine.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), " ", 4)
		if len(parts) != 4 {
			t.Fatalf("fixture line %q", sc.Text())
		}
		ev := engine.Event{Type: parts[1], TurnID: parts[2], Data: json.RawMessage(parts[3])}
		if ev.TurnID == "-" {
			ev.TurnID = ""
		}
		if _, err := fmt.Sscan(parts[0], &ev.Seq); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// wireScenario runs one session through every writer: context, input with
// author, key, mode and answer, text, tool calls (valid, invalid, without id
// or input), progress, results (ok, error, unknown), the result tool, a
// question, approvals decided every way, retried, expired and interrupted by
// a crash, max iterations, cancel with queued input, interrupt, provider
// and internal failures with queued input, resume with and without retry,
// crash recovery and shutdown, usage with cache tokens and a compaction.
// It returns the session's log as the store holds it.
func wireScenario(t *testing.T) []engine.Event {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "brain.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r := &wireRig{t: t, store: &crashable{Store: st}, now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	r.model = &scripted{entered: make(chan struct{}, 4)}
	r.crashed = make(chan struct{}, 1)
	r.agent = &engine.Agent{Name: "default", Model: r.model, Instructions: "test", Ask: true, MaxToolIterations: 3}
	for _, d := range r.tools() {
		tool, err := tools.Compile(d)
		if err != nil {
			t.Fatal(err)
		}
		r.agent.Tools = append(r.agent.Tools, tool)
	}
	r.start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.eng.Stop(ctx)
	})

	s, _, err := r.eng.CreateSession(ctx, engine.NewSession{Agent: "default", Origin: engine.OriginSlack, ThreadKey: "slack:T1:C1:1.2",
		Interactive: true, StartedBy: "U1", Context: "Thread <context> & \"quotes\""})
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID
	turns := 0
	next := func() engine.Session { turns++; return r.waitTurns(id, turns) }

	// Tools of every kind, then the result tool, then an answer.
	r.model.push(
		say("Working on it <now> & later",
			call("call_add", "add", `{"a": 1, "b": 2}`),
			call("call_fetch", "fetch", `{}`),
			call("call_bad", "add", `not json`),
			call("", "add", ``),
			call("call_nope", "nope", `{}`)),
		say("", call("call_report", "report", `{"status": "one"}`)),
		say("All done."),
	)
	r.send(id, engine.Input{Text: "hello <world>  \n", Author: "U1", IdempotencyKey: "key-1", RequestID: "req-1"})
	next()

	// A question, steering while it is open, and the answer.
	r.model.push(say("Which one?", call("call_ask", "ask", `{"text":"Which environment?","options":[{"label":"Staging","value":"stg"},{"label":"Production","value":"prod"}]}`)))
	r.send(id, engine.Input{Text: "deploy", Author: "U1"})
	s = next()
	r.send(id, engine.Input{Text: "careful, friday freeze", Author: "U2"})
	r.model.push(say("", call("call_t1", "ticket", `{"title":"Deploy","mode":"ok"}`)), say("Proposed."))
	r.send(id, engine.Input{Text: "prod", Answer: &engine.Answer{QuestionID: s.OpenQuestion().ID, Value: "prod"}})
	next()
	r.decide(r.pending(id)[0].ID, true)
	r.waitEvents(id, engine.EventApprovalApplied, 1)

	// Approvals decided, applied, failed, retried, unconfirmed and expired.
	r.model.push(say("",
		call("call_t2", "ticket", `{"title":"No","mode":"deny"}`),
		call("call_t3", "ticket", `{"title":"Empty","mode":"empty"}`),
		call("call_t4", "ticket", `{"title":"Flaky","mode":"flaky"}`),
		call("call_t5", "ticket", `{"title":"Lost","mode":"unknown"}`),
		call("call_t6", "ticket", `{"title":"Late","mode":"late"}`)),
		say("Five proposals."))
	r.send(id, engine.Input{Text: "more tickets", Author: "U1"})
	next()
	as := r.pending(id)
	r.decide(as[0].ID, false)
	r.decide(as[1].ID, true)
	r.waitEvents(id, engine.EventApprovalApplied, 2)
	r.decide(as[2].ID, true)
	r.waitEvents(id, engine.EventApprovalFailed, 1)
	if _, err := r.eng.Retry(ctx, as[2].ID, engine.Decision{By: "U1"}); err != nil {
		t.Fatal(err)
	}
	r.waitEvents(id, engine.EventApprovalApplied, 3)
	r.decide(as[3].ID, true)
	r.waitEvents(id, engine.EventApprovalUnconfirmed, 1)
	r.advance(200 * time.Hour)
	if err := r.eng.ExpireApprovals(ctx); err != nil {
		t.Fatal(err)
	}

	// The iteration cap.
	r.model.push(say("", call("call_l1", "add", `{"a":2,"b":3}`)), say("", call("call_l2", "add", `{"a":2,"b":3}`)), say("", call("call_l3", "add", `{"a":2,"b":3}`)))
	r.send(id, engine.Input{Text: "loop", Author: "U1"})
	next()

	// Cancel a running turn with input queued behind it, then an open
	// question.
	hold := make(chan struct{})
	r.model.push(scriptStep{hold: hold})
	r.send(id, engine.Input{Text: "slow", Author: "U1"})
	r.entered()
	r.send(id, engine.Input{Text: "dropped by the cancel", Author: "U1"})
	if _, err := r.eng.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	next()
	r.model.push(say("", call("call_ask2", "ask", `{"text":"Sure?"}`)))
	r.send(id, engine.Input{Text: "ask me", Author: "U1"})
	next()
	if _, err := r.eng.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}

	// Interrupt a running turn with new input.
	r.model.push(scriptStep{hold: make(chan struct{})}, say("Switching."))
	r.send(id, engine.Input{Text: "slow again", Author: "U1"})
	r.entered()
	r.send(id, engine.Input{Text: "stop that", Author: "U1", Mode: engine.ModeInterrupt})
	next()
	next()

	// Provider failures (transient with queued input, resumed with retry;
	// permanent) and an internal one, each resumed.
	hold = make(chan struct{})
	r.model.push(scriptStep{hold: hold, err: &engine.ProviderError{Transient: true, Status: 429, Code: engine.ProviderRateLimited, Message: "slow down"}})
	r.send(id, engine.Input{Text: "rate", Author: "U1"})
	r.entered()
	r.send(id, engine.Input{Text: "queued meanwhile", Author: "U1"})
	close(hold)
	next()
	r.model.push(say("Both answered."))
	if _, err := r.eng.ResumeWith(ctx, id, engine.ResumeOptions{Retry: true, RequestID: "req-2"}); err != nil {
		t.Fatal(err)
	}
	next()
	r.model.push(scriptStep{err: &engine.ProviderError{Status: 401, Code: engine.ProviderAuth, Message: "invalid x-api-key"}})
	r.send(id, engine.Input{Text: "auth", Author: "U1"})
	next()
	r.resume(id)
	r.model.push(scriptStep{err: errors.New("boom")})
	r.send(id, engine.Input{Text: "internal", Author: "U1"})
	next()
	r.resume(id)

	// A crash during an apply, then during a tool call.
	r.model.push(say("", call("call_t7", "ticket", `{"title":"Crash","mode":"crash"}`)), say("ok"))
	r.send(id, engine.Input{Text: "crash apply", Author: "U1"})
	next()
	r.decide(r.pending(id)[0].ID, true)
	r.restart()
	r.model.push(say("", call("call_crash", "crash", `{}`)))
	r.send(id, engine.Input{Text: "crash turn", Author: "U1"})
	select {
	case <-r.crashed:
	case <-time.After(20 * time.Second):
		t.Fatal("the crash tool did not run")
	}
	r.restart()
	turns++
	r.waitTurns(id, turns)
	r.resume(id)

	// Shutdown during a turn.
	r.model.push(scriptStep{hold: make(chan struct{})})
	r.send(id, engine.Input{Text: "long", Author: "U1"})
	r.entered()
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	r.stop(stopped)

	// After the restart: a turn whose usage has cache reads and writes,
	// then a compaction asked for by a person.
	r.start()
	r.resume(id)
	r.model.push(scriptStep{resp: engine.ModelResponse{Text: "Cached.",
		Usage: engine.Usage{InputTokens: 100, OutputTokens: 3, CacheReadTokens: 80, CacheWriteTokens: 15}}})
	r.send(id, engine.Input{Text: "cached", Author: "U1"})
	turns++
	next()
	r.model.push(say("The person deployed to prod and asked for tickets."))
	if _, err := r.eng.Compact(ctx, id); err != nil {
		t.Fatal(err)
	}

	evs, err := st.Events(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
