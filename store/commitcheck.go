package store

import (
	"encoding/json"
	"slices"

	"brain/engine"
)

// The checks below are the engine.Store contract every implementation
// enforces before any I/O, kept here so stores share one wording of it.
// Each error matches engine.ErrInvariant: a caller that breaks the contract
// has a bug. A store may refuse more (what its dialect cannot keep), never
// less.

// CheckNewSession reports a session engine.Store.CreateSession must refuse.
func CheckNewSession(s engine.Session) error {
	if s.ID == "" {
		return invariant("create session: empty id")
	}
	return nil
}

// CheckCommit reports a commit engine.Store.Commit must refuse: one that
// would store something the engine cannot read back (an event without id,
// or with data that is not JSON, would break every later read of the log).
func CheckCommit(c engine.Commit) error {
	if c.SessionID == "" {
		return invariant("commit: empty session id")
	}
	if c.Now.IsZero() {
		return invariant("commit session %s: Now is zero", c.SessionID)
	}
	op := "commit session " + c.SessionID
	if err := checkFence(op, c.Fence); err != nil {
		return err
	}
	if err := validateEvents(op, c.Events); err != nil {
		return err
	}
	if c.Result != nil {
		if err := validJSON(op+": result data", c.Result.Data); err != nil {
			return err
		}
	}
	if c.NewApproval != nil {
		return validateNewApproval(op, *c.NewApproval)
	}
	return nil
}

// CheckApprovalCommit reports an approval commit
// engine.Store.CommitApproval must refuse before it reads the approval;
// ApplyApproval checks what Update left.
func CheckApprovalCommit(c engine.ApprovalCommit) error {
	if c.ID == "" {
		return invariant("commit approval: empty id")
	}
	op := "commit approval " + c.ID
	if c.Now.IsZero() {
		return invariant("%s: Now is zero", op)
	}
	if err := checkFence(op, c.Fence); err != nil {
		return err
	}
	return validateEvents(op, c.Events)
}

// checkApprovalOutput reports an approval output, as c.Update left it,
// that engine.Store.CommitApproval must refuse to write.
func checkApprovalOutput(c engine.ApprovalCommit, output json.RawMessage) error {
	return validJSON("commit approval "+c.ID+": output", output)
}

// checkFence checks a commit's fence, nil or complete.
func checkFence(op string, f *engine.Fence) error {
	if f != nil && (f.Key == "" || f.Owner == "") {
		return invariant("%s: fence needs a lease key and an owner", op)
	}
	return nil
}

// validateNewApproval checks Commit.NewApproval: the store could not read
// back, or the engine could not apply, an approval without id or with
// input or output that is not JSON. op prefixes the message.
func validateNewApproval(op string, a engine.Approval) error {
	if a.ID == "" {
		return invariant("%s: new approval has no id", op)
	}
	if err := validJSON(op+": approval "+a.ID+": input", a.Input); err != nil {
		return err
	}
	return validJSON(op+": approval "+a.ID+": output", a.Output)
}

// validateEvents checks what every appended event needs; op prefixes the
// message.
func validateEvents(op string, evs []engine.Event) error {
	for i, ev := range evs {
		if ev.ID == "" {
			return invariant("%s: event %d has no id", op, i)
		}
		if err := validJSON(op+": event "+ev.ID+": data", ev.Data); err != nil {
			return err
		}
	}
	return nil
}

// validJSON accepts an absent value or a JSON document; what names it in
// the message.
func validJSON(what string, b []byte) error {
	if len(b) > 0 && !json.Valid(b) {
		return invariant("%s is not valid JSON", what)
	}
	return nil
}

// approvalEvents is what engine.Store.CommitApproval appends once c.Update
// has left the row as a: c.Events, then what c.Emit makes of a, checked as
// Events are.
func approvalEvents(c engine.ApprovalCommit, a engine.Approval) ([]engine.Event, error) {
	if c.Emit == nil {
		return c.Events, nil
	}
	more, err := c.Emit(a)
	if err != nil {
		return nil, err
	}
	if err := validateEvents("commit approval "+c.ID, more); err != nil {
		return nil, err
	}
	return append(slices.Clone(c.Events), more...), nil
}
