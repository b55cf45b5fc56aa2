package store

import (
	"encoding/json"
	"time"

	"brain/engine"
)

// The merge rules of engine.Store's two commits, written once. A driver
// reads the row inside its transaction, calls ApplyCommit or ApplyApproval,
// and writes back what they return; what is dialect (SQL, locking, batching)
// stays in the driver, what the contract decides is here.

// UpdateError carries an error returned by a commit's Update or Emit
// through a driver's transaction, so the driver returns it to the caller
// unchanged (errors.As finds it; Err is what the caller gets).
type UpdateError struct{ Err error }

func (e UpdateError) Error() string { return e.Err.Error() }

// Log is a session's sequence bookkeeping inside a write transaction: the
// seq of its last event and of its last user message.
type Log struct {
	LastSeq      int64
	LastInputSeq int64
}

// Append stamps evs to follow l, in order: each gets the next seq, the
// session id, now (when CreatedAt is zero, else CreatedAt in UTC) and {}
// (when Data is empty); l advances past them. The driver inserts the events
// returned and writes l back to the session row.
func (l *Log) Append(sessionID string, now time.Time, evs []engine.Event) []engine.Event {
	out := make([]engine.Event, len(evs))
	for i, ev := range evs {
		ev.SessionID = sessionID
		ev.Seq = l.LastSeq + 1
		if ev.CreatedAt.IsZero() {
			ev.CreatedAt = now
		} else {
			ev.CreatedAt = ev.CreatedAt.UTC()
		}
		if len(ev.Data) == 0 {
			ev.Data = json.RawMessage("{}")
		}
		l.LastSeq = ev.Seq
		if ev.Type == engine.EventUserMessage {
			l.LastInputSeq = ev.Seq
		}
		out[i] = ev
	}
	return out
}

// Applied is what a commit makes of the session row it read.
type Applied struct {
	// Session is the row to write back and, once written, the commit's
	// result: UpdatedAt is the commit's time, LastSeq follows Events, and
	// an empty Question or Result is nil (as a later read returns it).
	Session engine.Session
	// LastInputSeq is the row's seq of its last user message.
	LastInputSeq int64
	// Events are the commit's events, stamped, to insert in order.
	Events []engine.Event
}

// ApplyCommit is the merge rule of engine.Store.Commit on cur, the session
// row as read in the transaction, and lastInputSeq, its bookkeeping:
// c.Update runs on a copy of cur (its error comes back as UpdateError) and
// only the fields the engine may change are taken from it — identity,
// origin and the sequence bookkeeping belong to the store — then c.Events
// are stamped after cur's last seq.
func ApplyCommit(c engine.Commit, cur engine.Session, lastInputSeq int64) (Applied, error) {
	next := cur
	if c.Update != nil {
		upd := cur
		if err := c.Update(&upd); err != nil {
			return Applied{}, UpdateError{err}
		}
		next.Status = upd.Status
		next.InputCursor = upd.InputCursor
		next.Checkpoint = upd.Checkpoint
		next.Question = upd.Question
		next.Result = upd.Result
		next.ContextSeq = upd.ContextSeq
	}
	now := c.Now.UTC()
	log := Log{LastSeq: next.LastSeq, LastInputSeq: lastInputSeq}
	events := log.Append(c.SessionID, now, c.Events)
	next.LastSeq = log.LastSeq
	next.UsageTotal = next.UsageTotal.Add(UsageOf(events))
	next.UpdatedAt = now
	if len(next.Question) == 0 {
		next.Question = nil
	}
	if len(next.Result) == 0 {
		next.Result = nil
	}
	return Applied{Session: next, LastInputSeq: log.LastInputSeq, Events: events}, nil
}

// UsageOf is what evs add to their session's running usage total: each
// turn's usage (on turn.completed, its compaction included) and each
// compaction's made outside a turn. An event that cannot be decoded adds
// nothing, as the engine leaves it out of everything else.
func UsageOf(evs []engine.Event) engine.Usage {
	var u engine.Usage
	for _, ev := range evs {
		switch ev.Type {
		case engine.EventTurnCompleted:
			if p, err := ev.Decode(); err == nil {
				u = u.Add(p.(engine.TurnCompleted).Usage)
			}
		case engine.EventContextCompacted:
			if p, err := ev.Decode(); err == nil && ev.TurnID == "" {
				u = u.Add(p.(engine.ContextCompacted).Usage)
			}
		}
	}
	return u
}

// ApplyApproval is the merge rule of engine.Store.CommitApproval on cur,
// the approval as read in the transaction: c.Update runs on a copy of cur
// and only the decision and apply fields are taken from it (what was
// proposed, and to which session, never changes); the output it left is
// checked; the events to append to cur's session are c.Events then what
// c.Emit makes of the result. An error from Update or Emit comes back as
// UpdateError, a broken contract as engine.ErrInvariant.
func ApplyApproval(c engine.ApprovalCommit, cur engine.Approval) (engine.Approval, []engine.Event, error) {
	next := cur
	if c.Update != nil {
		upd := cur
		if err := c.Update(&upd); err != nil {
			return engine.Approval{}, nil, UpdateError{err}
		}
		next.Status = upd.Status
		next.DecisionID = upd.DecisionID
		next.DecidedBy = upd.DecidedBy
		next.DecidedAt = upd.DecidedAt
		next.DecidedSurface = upd.DecidedSurface
		next.Output = upd.Output
		next.Error = upd.Error
		next.Attempts = upd.Attempts
		next.Votes = upd.Votes
		next.Comment = upd.Comment
		next.RemindedAt = upd.RemindedAt
	}
	evs, err := approvalEvents(c, next)
	if err != nil {
		return engine.Approval{}, nil, UpdateError{err}
	}
	if err := checkApprovalOutput(c, next.Output); err != nil {
		return engine.Approval{}, nil, err
	}
	return next, evs, nil
}

// NewApproval is the row engine.Commit.NewApproval inserts: it belongs to
// sessionID whatever a says, a zero CreatedAt or UpdatedAt becomes now, and
// an empty Status becomes pending. (An empty Input is stored as {} by the
// driver, as every absent JSON object is.)
func NewApproval(sessionID string, now time.Time, a engine.Approval) engine.Approval {
	a.SessionID = sessionID
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now
	}
	if a.UpdatedAt.IsZero() {
		a.UpdatedAt = now
	}
	if a.Status == "" {
		a.Status = engine.ApprovalPending
	}
	return a
}
