package web

import (
	"fmt"
	"time"

	"brain/engine"
)

// The trace view of a session: each turn a group, inside it the model's
// work and each tool call as spans with their durations (from the events'
// times), the turn's tokens and estimated cost; arguments and results
// folded; a call without a result while the turn runs shows as running.
// Bookkeeping (status changes, turn start and end, tool progress) folds
// into the turn's header. Events outside a turn (a message, a decision
// made later) stay entries of their own. The raw log is the timeline.

// traceEntry is a turn, or one event outside any turn (Item).
type traceEntry struct {
	Turn *traceTurn
	Item *item
}

type traceTurn struct {
	ID  string
	N   int
	Seq int64 // the turn.started event's
	// Last is the seq of the turn's last event so far: with ID and N it
	// names a finished turn's entry in the cache.
	Last    int64
	Started time.Time
	Ended   time.Time
	Running bool
	Outcome engine.Outcome
	Code    string
	Rounds  int
	Usage   engine.Usage
	Cost    float64
	Priced  bool
	Spans   []*traceSpan
	// Tools counts the tool calls; Failed those that failed.
	Tools, Failed int
}

// traceSpan is a step of a turn: the model's (Kind "model", ending with
// its message or tool calls), a tool call's ("tool"), or another event
// of the turn shown as its timeline entry ("item").
type traceSpan struct {
	Kind     string
	Name     string
	CallID   string
	Start    time.Time
	End      time.Time
	Running  bool
	Error    bool
	Unknown  bool
	Args     string
	Output   string
	Progress int
	// Connect links the connections page when the call needed the
	// person's connection to ConnectTo.
	ConnectTo, Connect string
	Item               *item
	// Offset and Width place the span's bar in the turn's time, in
	// percent.
	Offset, Width int
}

// Duration is the turn's; a running turn's so far is unknown here.
func (t *traceTurn) Duration() time.Duration {
	if t.Ended.IsZero() {
		return -1
	}
	return t.Ended.Sub(t.Started)
}

// Duration is the span's; -1 while it runs.
func (s *traceSpan) Duration() time.Duration {
	if s.End.IsZero() {
		return -1
	}
	return s.End.Sub(s.Start)
}

// Title is the turn header's summary line.
func (t *traceTurn) Title() string {
	state := string(t.Outcome)
	if t.Running {
		state = "running"
	} else if state == "" {
		state = "ended"
	}
	s := fmt.Sprintf("Turn %d · %s", t.N, state)
	if t.Code != "" {
		s += " (" + t.Code + ")"
	}
	return s
}

// tracer builds a trace from events in log order.
type tracer struct {
	entries []traceEntry
	turns   map[string]*traceTurn
	calls   map[string]*traceSpan
	n       int
	// price estimates a turn's cost; nil: none.
	price func(engine.Usage) (float64, bool)
}

func newTracer(price func(engine.Usage) (float64, bool)) *tracer {
	return &tracer{turns: map[string]*traceTurn{}, calls: map[string]*traceSpan{}, price: price}
}

// add takes the next event; it returns the entry it changed (nil when
// the event shows nowhere).
func (tr *tracer) add(ev engine.Event) *traceEntry {
	p, err := ev.Decode()
	turn := tr.turns[ev.TurnID]
	if ev.TurnID == "" || (turn == nil && ev.Type != engine.EventTurnStarted) || err != nil {
		it, ok := timelineItem(ev)
		if !ok {
			return nil
		}
		tr.entries = append(tr.entries, traceEntry{Item: &it})
		return &tr.entries[len(tr.entries)-1]
	}
	if turn == nil {
		tr.n++
		turn = &traceTurn{ID: ev.TurnID, N: tr.n, Seq: ev.Seq, Started: ev.CreatedAt, Running: true}
		tr.turns[ev.TurnID] = turn
		tr.entries = append(tr.entries, traceEntry{Turn: turn})
	}
	entry := tr.entryOf(turn)
	turn.Last = max(turn.Last, ev.Seq)
	switch p := p.(type) {
	case engine.TurnStarted, engine.SessionStatus:
		// Bookkeeping: the header says it.
	case engine.TurnCompleted:
		turn.Running, turn.Ended = false, ev.CreatedAt
		turn.Outcome, turn.Code, turn.Rounds, turn.Usage = p.Outcome, p.Code, p.Rounds, p.Usage
		if tr.price != nil {
			turn.Cost, turn.Priced = tr.price(p.Usage)
		}
		if n := len(turn.Spans); n == 0 || turn.Spans[n-1].Kind != "item" {
			tr.modelUntil(turn, ev.CreatedAt)
		}
		for _, sp := range turn.Spans {
			if sp.Kind == "tool" && sp.Running {
				// The turn ended without the call's result.
				sp.Running, sp.Unknown, sp.End = false, true, ev.CreatedAt
			}
		}
	case engine.AgentMessage:
		tr.modelUntil(turn, ev.CreatedAt)
		it, _ := timelineItem(ev)
		turn.Spans = append(turn.Spans, &traceSpan{Kind: "item", Item: &it, Start: ev.CreatedAt, End: ev.CreatedAt})
	case engine.ToolCall:
		tr.modelUntil(turn, ev.CreatedAt)
		sp := &traceSpan{Kind: "tool", Name: p.Name, CallID: p.ID, Start: ev.CreatedAt, Running: true, Args: pretty(p.Input)}
		turn.Spans = append(turn.Spans, sp)
		tr.calls[p.ID] = sp
		turn.Tools++
	case engine.ToolProgress:
		if sp := tr.calls[p.CallID]; sp != nil {
			sp.Progress++
			if provider, link := connectLinkOf(p, ev.SessionID); link != "" {
				sp.ConnectTo, sp.Connect = provider, link
			}
		}
	case engine.ToolCallResult:
		sp := tr.calls[p.CallID]
		if sp == nil {
			sp = &traceSpan{Kind: "tool", Name: p.Name, CallID: p.CallID, Start: ev.CreatedAt}
			turn.Spans = append(turn.Spans, sp)
			turn.Tools++
		}
		it, _ := timelineItem(ev)
		sp.End, sp.Running, sp.Error, sp.Unknown, sp.Output = ev.CreatedAt, false, p.Result.IsError, p.Result.UnknownOutcome, it.Pre
		if sp.Error {
			turn.Failed++
		}
		delete(tr.calls, p.CallID)
	default:
		it, ok := timelineItem(ev)
		if !ok {
			return entry
		}
		if ev.Type == engine.EventQuestionAsked || ev.Type == engine.EventSessionError || ev.Type == engine.EventApprovalRequested {
			tr.modelUntil(turn, ev.CreatedAt)
		}
		turn.Spans = append(turn.Spans, &traceSpan{Kind: "item", Item: &it, Start: ev.CreatedAt, End: ev.CreatedAt})
	}
	tr.layout(turn)
	return entry
}

func (tr *tracer) entryOf(turn *traceTurn) *traceEntry {
	for i := len(tr.entries) - 1; i >= 0; i-- {
		if tr.entries[i].Turn == turn {
			return &tr.entries[i]
		}
	}
	return nil
}

// modelUntil records the model's work up to at: a span from the end of
// the turn's last step (or its start) to at. Calls made together (one
// round) come after one model span: while a call runs, nothing is added.
func (tr *tracer) modelUntil(turn *traceTurn, at time.Time) {
	start := turn.Started
	for _, sp := range turn.Spans {
		if sp.Running {
			return
		}
		if sp.End.After(start) {
			start = sp.End
		}
	}
	if n := len(turn.Spans); n > 0 && !at.After(start) {
		return
	}
	turn.Spans = append(turn.Spans, &traceSpan{Kind: "model", Name: "model", Start: start, End: at})
}

// Thinking reports whether the model works now: the turn runs and no
// tool call does.
func (t *traceTurn) Thinking() bool {
	if !t.Running {
		return false
	}
	for _, sp := range t.Spans {
		if sp.Running {
			return false
		}
	}
	return true
}

// layout places the spans' bars in the turn's time (so far).
func (tr *tracer) layout(turn *traceTurn) {
	end := turn.Ended
	for _, sp := range turn.Spans {
		if sp.End.After(end) {
			end = sp.End
		}
		if sp.Start.After(end) {
			end = sp.Start
		}
	}
	total := end.Sub(turn.Started)
	for _, sp := range turn.Spans {
		if total <= 0 {
			sp.Offset, sp.Width = 0, 100
			continue
		}
		stop := sp.End
		if stop.IsZero() {
			stop = end
		}
		sp.Offset = int(sp.Start.Sub(turn.Started) * 100 / total)
		sp.Width = max(1, int(stop.Sub(sp.Start)*100/total))
		sp.Offset = min(sp.Offset, 99)
		sp.Width = min(sp.Width, 100-sp.Offset)
	}
}

// trim keeps the last n entries (a live stream's memory stays bounded;
// older turns no longer change).
func (tr *tracer) trim(n int) {
	if len(tr.entries) <= n {
		return
	}
	for _, e := range tr.entries[:len(tr.entries)-n] {
		if e.Turn != nil {
			delete(tr.turns, e.Turn.ID)
		}
	}
	tr.entries = append([]traceEntry(nil), tr.entries[len(tr.entries)-n:]...)
}
