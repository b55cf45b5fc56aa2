package enginetest

import (
	"context"
	"time"

	"brain/engine"
)

// One fake per engine role (engine/roles.go): a plain struct whose
// methods call its ...Func fields. A method whose func a test left nil is
// not expected to be called, and panics. A consumer's test fake embeds the
// roles it needs and sets what its test calls; a role method the fake
// defines itself takes precedence over the embedded one.

// Sessions is a fake engine.Sessions (and engine.SessionReader).
type Sessions struct {
	SessionFunc  func(ctx context.Context, id string) (engine.Session, error)
	SessionsFunc func(ctx context.Context, f engine.SessionFilter) ([]engine.Session, error)
}

func (f *Sessions) Session(ctx context.Context, id string) (engine.Session, error) {
	return f.SessionFunc(ctx, id)
}

func (f *Sessions) Sessions(ctx context.Context, filter engine.SessionFilter) ([]engine.Session, error) {
	return f.SessionsFunc(ctx, filter)
}

// Log is a fake engine.Log; Events is a fixed log with the same method.
type Log struct {
	EventsFunc func(ctx context.Context, sessionID string, after int64, limit int) ([]engine.Event, error)
}

func (f *Log) Events(ctx context.Context, sessionID string, after int64, limit int) ([]engine.Event, error) {
	return f.EventsFunc(ctx, sessionID, after, limit)
}

// Starter is a fake engine.Starter.
type Starter struct {
	CreateSessionFunc          func(ctx context.Context, n engine.NewSession) (engine.Session, bool, error)
	CreateSessionWithInputFunc func(ctx context.Context, n engine.NewSession, in engine.Input) (engine.Session, engine.Event, bool, error)
	SendFunc                   func(ctx context.Context, sessionID string, in engine.Input) (engine.Event, bool, error)
}

func (f *Starter) CreateSession(ctx context.Context, n engine.NewSession) (engine.Session, bool, error) {
	return f.CreateSessionFunc(ctx, n)
}

func (f *Starter) CreateSessionWithInput(ctx context.Context, n engine.NewSession, in engine.Input) (engine.Session, engine.Event, bool, error) {
	return f.CreateSessionWithInputFunc(ctx, n, in)
}

func (f *Starter) Send(ctx context.Context, sessionID string, in engine.Input) (engine.Event, bool, error) {
	return f.SendFunc(ctx, sessionID, in)
}

// Turns is a fake engine.Turns.
type Turns struct {
	ResumeFunc     func(ctx context.Context, sessionID string) (engine.Session, error)
	ResumeWithFunc func(ctx context.Context, sessionID string, opts engine.ResumeOptions) (engine.Resumed, error)
	CancelFunc     func(ctx context.Context, sessionID string) (engine.Session, error)
}

func (f *Turns) Resume(ctx context.Context, sessionID string) (engine.Session, error) {
	return f.ResumeFunc(ctx, sessionID)
}

func (f *Turns) ResumeWith(ctx context.Context, sessionID string, opts engine.ResumeOptions) (engine.Resumed, error) {
	return f.ResumeWithFunc(ctx, sessionID, opts)
}

func (f *Turns) Cancel(ctx context.Context, sessionID string) (engine.Session, error) {
	return f.CancelFunc(ctx, sessionID)
}

// Approvals is a fake engine.Approvals (and engine.ApprovalReader).
type Approvals struct {
	ApprovalFunc  func(ctx context.Context, id string) (engine.Approval, error)
	ApprovalsFunc func(ctx context.Context, f engine.ApprovalFilter) ([]engine.Approval, error)
	DecideFunc    func(ctx context.Context, approvalID string, d engine.Decision) (engine.Approval, error)
	RetryFunc     func(ctx context.Context, approvalID string, d engine.Decision) (engine.Approval, error)
}

func (f *Approvals) Approval(ctx context.Context, id string) (engine.Approval, error) {
	return f.ApprovalFunc(ctx, id)
}

func (f *Approvals) Approvals(ctx context.Context, filter engine.ApprovalFilter) ([]engine.Approval, error) {
	return f.ApprovalsFunc(ctx, filter)
}

func (f *Approvals) Decide(ctx context.Context, approvalID string, d engine.Decision) (engine.Approval, error) {
	return f.DecideFunc(ctx, approvalID, d)
}

func (f *Approvals) Retry(ctx context.Context, approvalID string, d engine.Decision) (engine.Approval, error) {
	return f.RetryFunc(ctx, approvalID, d)
}

// Changes is a fake engine.Changes.
type Changes struct {
	ChangedFunc func(sessionID string) <-chan struct{}
}

func (f *Changes) Changed(sessionID string) <-chan struct{} { return f.ChangedFunc(sessionID) }

// Deltas is a fake engine.Deltas.
type Deltas struct {
	WatchDeltasFunc func(sessionID string) *engine.DeltaFeed
}

func (f *Deltas) WatchDeltas(sessionID string) *engine.DeltaFeed { return f.WatchDeltasFunc(sessionID) }

// Replica is a fake engine.Replica. Unlike the other fakes its zero value
// works: the only replica, alone on its store, whose every lease is held.
type Replica struct {
	LeaseFunc        func(ctx context.Context, origin engine.Origin, sessionID string) (func(), bool, error)
	Shared           bool
	HoldsSessionFunc func(id string) bool
	ID               string
	TTL              time.Duration
}

func (f *Replica) LeaseDelivery(ctx context.Context, origin engine.Origin, sessionID string) (func(), bool, error) {
	if f.LeaseFunc == nil {
		return func() {}, true, nil
	}
	return f.LeaseFunc(ctx, origin, sessionID)
}

func (f *Replica) SharesStore() bool { return f.Shared }

func (f *Replica) HoldsSession(id string) bool {
	return f.HoldsSessionFunc != nil && f.HoldsSessionFunc(id)
}

func (f *Replica) ReplicaID() string {
	if f.ID == "" {
		return "fake"
	}
	return f.ID
}

func (f *Replica) LeaseTTL() time.Duration {
	if f.TTL == 0 {
		return time.Minute
	}
	return f.TTL
}

var (
	_ engine.Sessions  = (*Sessions)(nil)
	_ engine.Log       = (*Log)(nil)
	_ engine.Log       = (*Events)(nil)
	_ engine.Starter   = (*Starter)(nil)
	_ engine.Turns     = (*Turns)(nil)
	_ engine.Approvals = (*Approvals)(nil)
	_ engine.Changes   = (*Changes)(nil)
	_ engine.Deltas    = (*Deltas)(nil)
	_ engine.Replica   = (*Replica)(nil)
)
