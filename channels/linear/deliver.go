package linear

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"brain/engine"
	"brain/tools"
)

// tools.LogSession is the log attribute key of a session id.
type Events interface {
	engine.Log
	engine.ApprovalReader
}

var _ Events = (*engine.Engine)(nil)

// Renderer maps a Linear session's events to agent activities: thoughts,
// an action per tool call, elicitations for questions and approvals, the
// response and errors. Each activity's id derives from its event, so a
// retry never posts it twice.
type Renderer struct {
	Engine Events
	Client *Client
	// ClientFor, when set, picks the client of an agent session (its
	// workspace's token) instead of Client.
	ClientFor func(ctx context.Context, agentSessionID string) (*Client, error)
	Log       *slog.Logger
	// ReviewState is the workflow state (a name or an id) an issue moves to
	// once an approval opened a pull request for it; "" attaches the pull
	// request and leaves the state (linear.review_state).
	ReviewState string

	// mu serializes Render, which the Deliverer calls one event at a time
	// anyway, for calls.
	mu sync.Mutex
	// calls holds each session's tool calls' one-line inputs (call id ->
	// input) until their results are rendered as actions.
	calls map[string]map[string]string
}

// Render renders one of the session's events as an activity.
func (r *Renderer) Render(ctx context.Context, s engine.Session, ev engine.Event) error {
	agentSession := s.ThreadKey
	if t, ok := ParseThread(s.ThreadKey); ok {
		agentSession = t.Session
	}
	c := r.Client
	if r.ClientFor != nil {
		var err error
		if c, err = r.ClientFor(ctx, agentSession); err != nil {
			return err
		}
	}
	next := ""
	if ev.Type == engine.EventAgentMessage {
		// The model's text and its tool calls commit together, so the
		// next event, if it is a call, is already there.
		more, err := r.Engine.Events(ctx, s.ID, ev.Seq, 1)
		if err != nil {
			return err
		}
		if len(more) > 0 {
			next = more[0].Type
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]map[string]string{}
	}
	calls := r.calls[s.ID]
	if calls == nil {
		calls = map[string]string{}
		r.calls[s.ID] = calls
	}
	defer func() {
		if len(calls) == 0 {
			delete(r.calls, s.ID)
		}
	}()
	return r.render(ctx, c, agentSession, s, ev, next, calls)
}

func (r *Renderer) render(ctx context.Context, c *Client, agentSession string, s engine.Session, ev engine.Event, next string, calls map[string]string) error {
	id := ActivityID(s.ID, fmt.Sprint(ev.Seq))
	payload, err := ev.Decode()
	if err != nil {
		// Retrying cannot make it readable: skip it rather than stall the thread.
		r.Log.Warn("not delivering an unreadable event", tools.LogSession, s.ID, tools.LogErr, err)
		return nil
	}
	note := func(approvalID, detail string) error {
		text := fmt.Sprintf("Approval %s: %s.", approvalID, strings.TrimPrefix(ev.Type, "approval."))
		if detail != "" {
			text += " " + detail
		}
		return c.Thought(ctx, agentSession, id, text, false)
	}
	switch d := payload.(type) {
	case engine.AgentMessage:
		if strings.TrimSpace(d.Text) == "" {
			return nil
		}
		if next == engine.EventToolCall {
			return c.Thought(ctx, agentSession, id, d.Text, false)
		}
		return c.Response(ctx, agentSession, id, d.Text)
	case engine.ToolCall:
		calls[d.ID] = clipText(oneLine(string(d.Input)), 200)
	case engine.ToolCallResult:
		result := clipText(oneLine(d.Result.Text()), 300)
		if d.Result.IsError {
			result = "error: " + result
		}
		if err := c.Action(ctx, agentSession, id, d.Name, calls[d.CallID], result); err != nil {
			return err
		}
		delete(calls, d.CallID)
		return nil
	case engine.ToolProgress:
		return c.Thought(ctx, agentSession, id, "Still working: "+d.Name+"…", true)
	case engine.Question:
		return c.Elicitation(ctx, agentSession, id, d.Text, QuestionOptions(d))
	case engine.ApprovalRequested:
		a, err := r.Engine.Approval(ctx, d.ApprovalID)
		if err != nil {
			return err
		}
		if a.Status != engine.ApprovalPending {
			// Decided before it could be shown (a policy approved it):
			// nothing to pick, so no elicitation.
			return c.Thought(ctx, agentSession, id, decidedBody(a), false)
		}
		return c.Elicitation(ctx, agentSession, id, ApprovalBody(a), ApprovalOptions(a))
	case engine.ApprovalDecided:
		return c.Thought(ctx, agentSession, id, decidedText(d), false)
	case engine.ApprovalVoted:
		return note(d.ApprovalID, fmt.Sprintf("%d of %d approvals, the latest by %s.%s", d.Count, d.Required, d.By, commentSuffix("Comment", d.Comment)))
	case engine.ApprovalReminder:
		return c.Thought(ctx, agentSession, id, fmt.Sprintf("Reminder: %q is still waiting for a decision and expires %s.",
			oneLine(d.Title), d.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")), false)
	case engine.ApplySucceeded:
		pr, ok := AppliedPullRequest(d)
		if !ok {
			return note(d.ApprovalID, "")
		}
		a, err := r.Engine.Approval(ctx, d.ApprovalID)
		if err != nil {
			return err
		}
		linked, err := r.linkPullRequest(ctx, c, agentSession, a, pr)
		if err != nil {
			return err
		}
		return note(d.ApprovalID, linked)
	case engine.ApplyFailed:
		return note(d.ApprovalID, d.Error)
	case engine.ApplyUnconfirmed:
		return note(d.ApprovalID, d.Error)
	case engine.ApprovalExpiry:
		return note(d.ApprovalID, "")
	case engine.SessionError:
		if d.Code == engine.CodeInputCancelled {
			what := "A message"
			if d.Input != "" {
				what = fmt.Sprintf("Your message “%s”", d.Input)
			}
			return c.Thought(ctx, agentSession, id, what+" was "+d.Message, false)
		}
		if err := c.Error(ctx, agentSession, id, fmt.Sprintf("%s: %s", d.Code, d.Message)); err != nil {
			return err
		}
		if d.InputID == "" {
			return nil
		}
		// The one-click way to run what the stop left unanswered.
		return c.Elicitation(ctx, agentSession, ActivityID(s.ID, fmt.Sprint(ev.Seq), "retry"),
			"The turn stopped before answering. Run the unanswered messages again?", RetryOptions(s.ID))
	case engine.PlanUpdated:
		steps := make([]PlanStep, len(d.Steps))
		for i, st := range d.Steps {
			steps[i] = PlanStep{Content: st.Content, Status: st.Status}
		}
		return c.SetPlan(ctx, agentSession, steps)
	case engine.TurnCompleted:
		if d.Outcome == engine.OutcomeMaxIterations {
			return c.Response(ctx, agentSession, id, "I stopped after the maximum number of tool rounds without a final answer. Send a message to continue.")
		}
	}
	return nil
}

// clipText keeps the first n runes of s, marking a cut with "…".
func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
