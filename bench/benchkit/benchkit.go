// Package benchkit is the set-up the turn benchmarks share (bench/history,
// bench/retention): a store of either driver, a zero-latency model (or
// one with a round trip's latency), an engine on them, a session's
// history seeded as the engine would have written it, and one-round turns
// run to their end.
//
// Only benchmarks import it.
package benchkit

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/sqlite"
)

// Drivers are the stores every benchmark measures.
var Drivers = []string{"sqlite", "postgres"}

// Echo is a zero-latency model: it answers every request (a turn's or a
// compaction's summary call) with a short text, so a benchmark times the
// engine and its store, not a model.
type Echo struct{}

// Generate answers at once.
func (Echo) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	return engine.ModelResponse{Text: "noted", Usage: engine.Usage{InputTokens: 100, OutputTokens: 2}}, nil
}

// Delayed answers as Echo does after Latency (a model's round trip):
// the turn's engine work is then a short stretch between waits, as with a
// real model, not back-to-back commits.
type Delayed struct{ Latency time.Duration }

// Generate answers after d.Latency, or when ctx ends.
func (d Delayed) Generate(ctx context.Context, req engine.ModelRequest) (engine.ModelResponse, error) {
	t := time.NewTimer(d.Latency)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return engine.ModelResponse{}, ctx.Err()
	case <-t.C:
	}
	return Echo{}.Generate(ctx, req)
}

// Open opens an empty store of driver ("sqlite": a file in b's temporary
// directory, synchronous=full; "postgres": a database of pgtest's cluster),
// closed when b ends.
func Open(b testing.TB, driver string) store.Store {
	b.Helper()
	ctx := context.Background()
	var (
		st  store.Store
		err error
	)
	switch driver {
	case "sqlite":
		st, err = sqlite.Open(ctx, filepath.Join(b.TempDir(), "b.db"))
	default:
		st, err = postgres.Open(ctx, pgtest.NewDatabase(b))
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// Engine starts an engine on st with one agent "a" answered by Echo,
// stopped when b ends.
func Engine(b testing.TB, st store.Store) *engine.Engine {
	b.Helper()
	return EngineWith(b, st, Echo{})
}

// EngineWith is Engine with agent "a" answered by model.
func EngineWith(b testing.TB, st store.Store, model engine.Model) *engine.Engine {
	b.Helper()
	ctx := context.Background()
	var ids atomic.Int64
	eng, err := engine.New(engine.Config{
		Store: st, Clock: time.Now,
		NewID:  func(p string) string { return fmt.Sprintf("%s_%d", p, ids.Add(1)) },
		Agents: []*engine.Agent{{Name: "a", Model: model, ContextWindow: 4096, MaxTokens: 1024}},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Stop(ctx) })
	return eng
}

// Turn sends text to session id and waits (on the engine's change
// signal, not a timer) until the turn it starts has ended.
func Turn(b testing.TB, eng *engine.Engine, id, text string) {
	b.Helper()
	ctx := context.Background()
	changed := eng.Changed(id)
	ev, _, err := eng.Send(ctx, id, engine.Input{Text: text})
	if err != nil {
		b.Fatal(err)
	}
	for {
		got, err := eng.Session(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		if got.Status == engine.StatusIdle && got.Checkpoint > ev.Seq {
			return
		}
		if got.Status == engine.StatusFailed || got.Status == engine.StatusInterrupted {
			evs, _ := eng.Events(ctx, id, got.Checkpoint, 0)
			b.Fatalf("the turn stopped (%s): %s", got.Status, evs[max(len(evs)-3, 0)].Data)
		}
		<-changed
		changed = eng.Changed(id)
	}
}

// Seed appends n events of completed one-round turns to session id, as
// the engine would have written them (5 events a turn: input, turn
// started, answer, turn completed, idle), committed at at, 500 events a
// commit. Event and turn ids start with prefix, which must be unique.
func Seed(b testing.TB, st store.Store, id, prefix string, at time.Time, n int) {
	b.Helper()
	ctx := context.Background()
	var batch []engine.Event
	var seq, checkpoint, cursor int64
	add := func(turnID string, p engine.Payload) {
		ev, err := engine.NewEvent(p)
		if err != nil {
			b.Fatal(err)
		}
		seq++
		ev.ID, ev.TurnID = fmt.Sprintf("%s_%d", prefix, seq), turnID
		batch = append(batch, ev)
	}
	flush := func() {
		if len(batch) == 0 {
			return
		}
		cp, cur := checkpoint, cursor
		if _, err := st.Commit(ctx, engine.Commit{SessionID: id, Now: at, Events: batch, Update: func(s *engine.Session) error {
			s.Checkpoint, s.InputCursor = cp, cur
			return nil
		}}); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	text := strings.Repeat("words of a past exchange ", 8)
	for t := 0; t < n/5; t++ {
		tid := fmt.Sprintf("%s_t%d", prefix, t)
		add("", engine.Input{Text: text, Author: "U1"})
		cursor = seq
		add(tid, engine.TurnStarted{InputIDs: []string{fmt.Sprintf("%s_%d", prefix, seq)}})
		add(tid, engine.AgentMessage{Text: text})
		add(tid, engine.TurnCompleted{Outcome: engine.OutcomeCompleted, Usage: engine.Usage{InputTokens: 100, OutputTokens: 20}})
		checkpoint = seq
		add(tid, engine.SessionStatus{Status: engine.StatusIdle, Reason: "turn_completed"})
		if len(batch) >= 500 {
			flush()
		}
	}
	flush()
}
