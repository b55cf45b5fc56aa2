package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"brain/engine/lease"
	"brain/engine/policy"
	"brain/tools"
)

// proposeCall runs an approval tool's preview and returns the outcome that
// records the proposal. Nothing is applied here.
func (e *Engine) proposeCall(ctx context.Context, t *turn, tool *tools.Tool, call ToolCall, tc tools.Call, timeout time.Duration) toolOutcome {
	pol, matched := e.policies.Match(tool.Name, call.Input, tool.FoldCase...)
	if matched && pol.Action == policy.PolicyDeny {
		e.count("approvals_refused")
		return failed("refused by policy %q: %s", pol.Name, pol.Message)
	}
	if !t.session.Interactive {
		why := nobodyThere(t.session, "approve this change")
		if matched {
			why += fmt.Sprintf(" (policy %q matches this call, but only deny policies apply when nobody is in the session)", pol.Name)
		}
		return failed("%s", why)
	}
	preview := tool.Preview
	if preview == nil {
		preview = tool.Hold // a run tool a policy holds (see policyHolds)
	}
	raw, out := e.invoke(ctx, call.Name, timeout, func(ctx context.Context) (json.RawMessage, error) {
		card, err := preview(ctx, tc)
		if err != nil {
			return nil, err
		}
		return json.Marshal(card)
	})
	if out.IsError {
		out.Text = "preview failed: " + out.Text
		return out
	}
	var card tools.Card
	if err := json.Unmarshal(raw, &card); err != nil {
		return failed("preview returned an invalid card: %v", err)
	}
	card = tidyCard(card, tool.Name)
	if len(card.Found) > 0 {
		// Policies may test what the preview found ($.found.paths): match
		// again, now that it is known; the first matching policy wins.
		pol, matched = e.policies.Match(tool.Name, withFound(call.Input, card.Found), tool.FoldCase...)
		if matched && pol.Action == policy.PolicyDeny {
			e.count("approvals_refused")
			return failed("refused by policy %q: %s", pol.Name, pol.Message)
		}
	}
	now := e.now()
	a := &Approval{
		ID:          e.newID("apr"),
		SessionID:   t.session.ID,
		TurnID:      t.id,
		CallID:      call.ID,
		Tool:        tool.Name,
		Agent:       t.agent.Name,
		Input:       call.Input,
		Card:        card,
		RequestedBy: t.session.StartedBy,
		Status:      ApprovalPending,
		CreatedAt:   now,
		ExpiresAt:   now.Add(e.approvalTTL),
		UpdatedAt:   now,
	}
	if matched {
		if done, ok := e.applyPolicy(a, pol, now); ok {
			return done
		}
	}
	return toolOutcome{
		Text: fmt.Sprintf("Recorded for approval as %s: %q. Nothing has been applied: the change runs only if a person approves it, "+
			"and you will see the decision in a later message. Do not report it as done.", a.ID, card.Title),
		approval: a,
	}
}

// Decision is a person's answer to an approval.
type Decision struct {
	Approve bool
	// By names who decided: a platform user id, or any label via the API.
	By string
	// ViaAPI is true for a caller holding an API key: it may decide
	// approvals of sessions started through the API or the console.
	ViaAPI bool
	// Key is the name of the API key the caller authenticated with, when
	// it did (By may name someone else for a key with act_for). Votes
	// count authenticated identities: one key is one voter.
	Key string
	// Comment is the approver's comment (approve) or the reason (deny).
	Comment string
	// Surface is where By is an identity (SurfaceSlack, SurfaceGitHub,
	// ...), so the person linked to it is found; empty: the API for key
	// holders, else the session's origin.
	Surface string
}

func alreadyDecided(a Approval) error {
	switch a.Status {
	case ApprovalExpired:
		return Errorf(CodeConflict, "approval %s has expired", a.ID)
	case ApprovalDenied:
		return Errorf(CodeConflict, "approval %s was already denied by %s", a.ID, a.DecidedBy)
	default:
		return Errorf(CodeConflict, "approval %s was already approved by %s (now %s)", a.ID, a.DecidedBy, a.Status)
	}
}

// Retry re-runs the apply of an unconfirmed or failed approval with the
// same decision id, so a downstream service can deduplicate it.
func (e *Engine) Retry(ctx context.Context, approvalID string, d Decision) (Approval, error) {
	if strings.TrimSpace(d.By) == "" {
		return Approval{}, Errorf(CodeInvalid, "by is required: who retries")
	}
	a, err := e.store.Approval(ctx, approvalID)
	if err != nil {
		return Approval{}, err
	}
	if _, _, err := e.authorize(ctx, a, d); err != nil {
		return Approval{}, err
	}
	evs, err := e.events("", ApprovalRetried{ApprovalID: a.ID, By: d.By, DecisionID: a.DecisionID, Attempt: a.Attempts + 1})
	if err != nil {
		return Approval{}, err
	}
	if err := e.holdApply(ctx, a.ID); err != nil {
		return Approval{}, err
	}
	got, _, err := e.commitApproval(ctx, ApprovalCommit{
		ID: a.ID, Now: e.now(), Fence: e.fence(lease.ApplyKey(a.ID)),
		Update: func(a *Approval) error {
			if a.Status != ApprovalUnconfirmed && a.Status != ApprovalFailed {
				return Errorf(CodeConflict, "approval %s is %s; only an unconfirmed or failed apply can be retried", a.ID, a.Status)
			}
			a.Status = ApprovalApplying
			a.Attempts++
			return nil
		},
		Events: evs,
	})
	if err != nil {
		e.releaseApply(ctx, a.ID)
		return Approval{}, takenOver(a.ID, err)
	}
	e.startApply(got)
	return got, nil
}

// startApply runs apply in the background; Stop waits for it and cancels
// it at the deadline, which leaves the approval unconfirmed.
func (e *Engine) startApply(a Approval) {
	e.mu.Lock()
	if e.stopping {
		e.mu.Unlock()
		// Left applying; once the lease is released, the next start (or
		// another replica) marks it unconfirmed for a person.
		e.log.Warn("not starting an apply during shutdown", tools.LogApprovalID, a.ID)
		e.releaseApply(context.Background(), a.ID)
		return
	}
	defer e.mu.Unlock()
	e.applies.Add(1)
	go func() {
		defer e.applies.Done()
		defer e.releaseApply(e.applyCtx, a.ID)
		e.apply(e.applyCtx, a)
	}()
}

// apply runs the approved write once and records what came of it.
func (e *Engine) apply(ctx context.Context, a Approval) {
	log := e.log.With(tools.LogSession, a.SessionID, "approval_id", a.ID)
	tool := e.approvalTool(a)
	var out toolOutcome
	var raw json.RawMessage
	if tool == nil {
		out = failed("tool %q is no longer configured for agent %q; nothing was applied", a.Tool, a.Agent)
	} else {
		tc := tools.Call{Input: a.Input, SessionID: a.SessionID, MessageID: e.messageOf(ctx, a), ToolCallID: a.CallID, Agent: a.Agent}
		tc.Requester, tc.Approver = e.applyIdentities(ctx, a)
		dec := tools.Decision{ID: a.DecisionID, By: a.DecidedBy, Found: a.Card.Found}
		raw, out = e.invoke(ctx, a.Tool, e.timeoutOf(tool), func(ctx context.Context) (json.RawMessage, error) {
			if tool.Apply == nil {
				return tool.Run(ctx, tc) // a held call (see policyHolds)
			}
			return tool.Apply(ctx, tc, dec)
		})
		if !out.IsError && len(raw) > e.maxOutputBytes {
			raw = nil
			out.Text = fmt.Sprintf("applied; its output was over %d bytes and is not kept", e.maxOutputBytes)
		}
	}
	var status ApprovalStatus
	var outcome Payload
	switch {
	case out.IsError && out.Unknown:
		status = ApprovalUnconfirmed
		outcome = ApplyUnconfirmed{ApprovalID: a.ID, Status: status, Tool: a.Tool, DecisionID: a.DecisionID, Error: out.Text}
	case out.IsError:
		status = ApprovalFailed
		outcome = ApplyFailed{ApprovalID: a.ID, Status: status, Tool: a.Tool, DecisionID: a.DecisionID, Error: out.Text}
	default:
		status = ApprovalApplied
		done := ApplySucceeded{ApprovalID: a.ID, Status: status, Tool: a.Tool, DecisionID: a.DecisionID}
		if len(raw) > 0 && json.Valid(raw) {
			done.Output = raw
		}
		outcome = done
	}
	evs, err := e.events("", outcome)
	if err != nil {
		// Left applying: the next start marks it unconfirmed.
		log.Error("record apply outcome", tools.LogErr, err)
		return
	}
	_, _, err = e.commitApproval(context.WithoutCancel(ctx), ApprovalCommit{
		ID: a.ID, Now: e.now(), Fence: e.fence(lease.ApplyKey(a.ID)),
		Update: func(cur *Approval) error {
			if cur.Status != ApprovalApplying {
				return Errorf(CodeConflict, "approval %s is %s, not applying", cur.ID, cur.Status)
			}
			cur.Status = status
			cur.Error = ""
			cur.Output = nil
			if out.IsError {
				cur.Error = out.Text
			} else if json.Valid(raw) {
				cur.Output = raw
			}
			return nil
		},
		Events: evs,
	})
	if err != nil {
		// Left applying: the next start marks it unconfirmed.
		log.Error("record apply outcome", tools.LogErr, err)
		return
	}
	e.count("approvals_" + string(status))
}

// messageOf returns the id of the model message that holds the
// approval's call (see tools.Call.MessageID): recorded with the proposal,
// or, for an approval proposed before brain recorded it, the first of the
// agent.message and tool.call events its response was recorded as, found
// in the log. It is "" when the log cannot be read; the apply runs all the
// same, since it needs only its arguments.
func (e *Engine) messageOf(ctx context.Context, a Approval) string {
	if a.MessageID != "" {
		return a.MessageID
	}
	sessionID, callID := a.SessionID, a.CallID
	evs, err := e.store.Events(ctx, sessionID, 0, 0)
	if err != nil {
		e.log.Warn("read the log for an apply's message id", tools.LogSession, sessionID, tools.LogErr, err)
		return ""
	}
	start, prev := "", ""
	for _, ev := range evs {
		if ev.Type != EventAgentMessage && ev.Type != EventToolCall {
			prev = ""
			continue
		}
		// One response is committed as one run of these events.
		if prev == "" || ev.TurnID != prev {
			start = ev.ID
		}
		prev = ev.TurnID
		if ev.Type == EventToolCall {
			if c, err := ev.Decode(); err == nil && c.(ToolCall).ID == callID {
				return start
			}
		}
	}
	return ""
}

// approvalTool finds the approval's tool among its agent's tools, those
// it offers now included.
func (e *Engine) approvalTool(a Approval) *tools.Tool {
	agent, ok := e.agents[a.Agent]
	if !ok {
		return nil
	}
	all := append([]*tools.Tool(nil), agent.Tools...)
	for _, c := range agent.When {
		all = append(all, c.Tools...)
	}
	if agent.Dynamic != nil {
		// Tools that come and go (MCP servers): the one offered now.
		all = append(all, agent.Dynamic()...)
	}
	for _, t := range all {
		if t.Name == a.Tool && (t.NeedsApproval() || t.Hold != nil) {
			return t
		}
	}
	return nil
}

// ExpireApprovals marks pending approvals past their expiry as expired. The
// engine runs it periodically; it is exported for tests and operators.
func (e *Engine) ExpireApprovals(ctx context.Context) error {
	due, err := e.store.Approvals(ctx, ApprovalFilter{Statuses: []ApprovalStatus{ApprovalPending}, ExpiresBefore: e.now()})
	if err != nil {
		return fmt.Errorf("list due approvals: %w", err)
	}
	for _, a := range due {
		e.expire(ctx, a.ID)
	}
	return nil
}

// expire records that a pending approval expired; a decision that won the
// race is left alone.
func (e *Engine) expire(ctx context.Context, id string) {
	evs, err := e.events("", ApprovalExpiry{ApprovalID: id})
	if err != nil {
		e.log.Error("expire approval", tools.LogApprovalID, id, tools.LogErr, err)
		return
	}
	_, _, err = e.commitApproval(ctx, ApprovalCommit{
		ID: id, Now: e.now(),
		Update: func(a *Approval) error {
			if a.Status != ApprovalPending {
				return errNothingToDo
			}
			a.Status = ApprovalExpired
			return nil
		},
		Events: evs,
	})
	if err != nil && !errors.Is(err, errNothingToDo) {
		e.log.Error("expire approval", tools.LogApprovalID, id, tools.LogErr, err)
		return
	}
	if err == nil {
		e.count("approvals_expired")
	}
}

// recoverApplies marks applies a crash interrupted as unconfirmed: they may
// or may not have happened, so they are never re-run without a person.
func (e *Engine) recoverApplies(ctx context.Context) error {
	stuck, err := e.store.Approvals(ctx, ApprovalFilter{Statuses: []ApprovalStatus{ApprovalApplying}})
	if err != nil {
		return err
	}
	for _, a := range stuck {
		// An apply whose lease this engine can claim has no live apply
		// anywhere: it was cut short. A live one is skipped.
		key := lease.ApplyKey(a.ID)
		held, err := e.leases.Acquire(ctx, key, nil)
		if err != nil {
			return err
		}
		if !held {
			continue
		}
		err = e.markUnconfirmed(ctx, a)
		if rerr := e.leases.Release(ctx, key); rerr != nil {
			e.log.Warn("release apply lease; it expires on its own", tools.LogApprovalID, a.ID, tools.LogErr, rerr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// markUnconfirmed records an apply that was cut short as unconfirmed,
// unless it is no longer applying.
func (e *Engine) markUnconfirmed(ctx context.Context, a Approval) error {
	msg := "brain stopped while the apply ran; it may or may not have happened. Retry runs it again with the same decision id."
	evs, err := e.events("", ApplyUnconfirmed{ApprovalID: a.ID, Status: ApprovalUnconfirmed, Tool: a.Tool, DecisionID: a.DecisionID, Error: msg})
	if err != nil {
		return fmt.Errorf("approval %s: %w", a.ID, err)
	}
	_, _, err = e.commitApproval(ctx, ApprovalCommit{
		ID: a.ID, Now: e.now(), Fence: e.fence(lease.ApplyKey(a.ID)),
		Update: func(cur *Approval) error {
			if cur.Status != ApprovalApplying {
				return errNothingToDo
			}
			cur.Status, cur.Error = ApprovalUnconfirmed, msg
			return nil
		},
		Events: evs,
	})
	if errors.Is(err, errNothingToDo) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("approval %s: %w", a.ID, err)
	}
	e.log.Warn("approval apply was interrupted; marked unconfirmed", tools.LogSession, a.SessionID, tools.LogApprovalID, a.ID)
	return nil
}

// Approval returns one approval.
func (e *Engine) Approval(ctx context.Context, id string) (Approval, error) {
	return e.store.Approval(ctx, id)
}

// Approvals lists approvals, newest first.
func (e *Engine) Approvals(ctx context.Context, f ApprovalFilter) ([]Approval, error) {
	return e.store.Approvals(ctx, f)
}

// commitApproval writes to the store and wakes the session's watchers.
func (e *Engine) commitApproval(ctx context.Context, c ApprovalCommit) (Approval, []Event, error) {
	a, evs, err := e.store.CommitApproval(ctx, c)
	if err != nil {
		return a, evs, err
	}
	if len(evs) > 0 {
		e.hub.notify(a.SessionID)
	}
	return a, evs, nil
}
