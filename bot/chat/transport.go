package chat

import (
	"context"

	"brain/engine"
)

// Transport is how the chat reaches its session: the engine in this
// process (Local), or a running daemon's HTTP API when that daemon owns the
// data directory (cmd/brain's API transport). The terminal code (prompt,
// numbered questions, y/n approvals, Ctrl-C) is the same over both.
type Transport interface {
	// CreateSession starts an interactive console session with agent.
	CreateSession(ctx context.Context, agent, user string) (engine.Session, error)
	Session(ctx context.Context, id string) (engine.Session, error)
	Send(ctx context.Context, id string, in engine.Input) (engine.Event, error)
	// Resume resumes the session, queueing what its stop left unanswered
	// again; it returns the sequence numbers of those inputs.
	Resume(ctx context.Context, id string) ([]int64, error)
	Cancel(ctx context.Context, id string) error
	Events(ctx context.Context, id string, after int64) ([]engine.Event, error)
	// Watch follows the session from after: the text being written and the
	// events stored.
	Watch(ctx context.Context, id string, after int64) (Watch, error)
	PendingApprovals(ctx context.Context, sessionID string) ([]engine.Approval, error)
	Approval(ctx context.Context, id string) (engine.Approval, error)
	Decide(ctx context.Context, id string, d engine.Decision) error
}

// Batch is what a Watch saw since its last Next.
type Batch struct {
	Deltas      []engine.Delta
	Events      []engine.Event
	Interrupted bool // Ctrl-C arrived while waiting
}

// Watch follows one session.
type Watch interface {
	// Next waits until something happened to the session (it may return an
	// empty Batch when only its status changed), Ctrl-C arrives on
	// interrupts, or ctx ends.
	Next(ctx context.Context, interrupts <-chan struct{}) (Batch, error)
	Close()
}

// Local is the chat's transport over an engine in this process.
type Local struct{ Engine *engine.Engine }

var _ Transport = Local{}

func (l Local) CreateSession(ctx context.Context, agent, user string) (engine.Session, error) {
	s, _, err := l.Engine.CreateSession(ctx, engine.NewSession{
		Agent: agent, Origin: engine.OriginConsole, Interactive: true, StartedBy: user,
	})
	return s, err
}

func (l Local) Session(ctx context.Context, id string) (engine.Session, error) {
	return l.Engine.Session(ctx, id)
}

func (l Local) Send(ctx context.Context, id string, in engine.Input) (engine.Event, error) {
	ev, _, err := l.Engine.Send(ctx, id, in)
	return ev, err
}

func (l Local) Resume(ctx context.Context, id string) ([]int64, error) {
	r, err := l.Engine.ResumeWith(ctx, id, engine.ResumeOptions{Retry: true})
	var seqs []int64
	for _, ev := range r.Retried {
		seqs = append(seqs, ev.Seq)
	}
	return seqs, err
}

func (l Local) Cancel(ctx context.Context, id string) error {
	_, err := l.Engine.Cancel(ctx, id)
	return err
}

func (l Local) Events(ctx context.Context, id string, after int64) ([]engine.Event, error) {
	return l.Engine.Events(ctx, id, after, 0)
}

func (l Local) PendingApprovals(ctx context.Context, sessionID string) ([]engine.Approval, error) {
	return l.Engine.Approvals(ctx, engine.ApprovalFilter{SessionID: sessionID, Statuses: []engine.ApprovalStatus{engine.ApprovalPending}})
}

func (l Local) Approval(ctx context.Context, id string) (engine.Approval, error) {
	return l.Engine.Approval(ctx, id)
}

func (l Local) Decide(ctx context.Context, id string, d engine.Decision) error {
	_, err := l.Engine.Decide(ctx, id, d)
	return err
}

func (l Local) Watch(ctx context.Context, id string, after int64) (Watch, error) {
	return &localWatch{eng: l.Engine, id: id, after: after, feed: l.Engine.WatchDeltas(id)}, nil
}

// localWatch reads the engine's delta feed and events, waking on its
// change notifications.
type localWatch struct {
	eng     *engine.Engine
	id      string
	after   int64
	feed    *engine.DeltaFeed
	changed <-chan struct{} // taken before the last read; nil at first
}

func (w *localWatch) Next(ctx context.Context, interrupts <-chan struct{}) (Batch, error) {
	if w.changed != nil {
		select {
		case <-w.changed:
		case <-w.feed.Ready():
		case <-interrupts:
			return Batch{Interrupted: true}, nil
		case <-ctx.Done():
			return Batch{}, ctx.Err()
		}
	}
	// The wake-up channel is taken before reading, so no commit is missed;
	// deltas before events, so a round's text shows before its
	// agent.message.
	w.changed = w.eng.Changed(w.id)
	b := Batch{Deltas: w.feed.Take()}
	evs, err := w.eng.Events(ctx, w.id, w.after, 0)
	if err != nil {
		return b, err
	}
	if len(evs) > 0 {
		w.after = evs[len(evs)-1].Seq
	}
	b.Events = evs
	return b, nil
}

func (w *localWatch) Close() { w.feed.Close() }
