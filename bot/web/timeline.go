package web

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"brain/engine"
	"brain/tools"
)

// item is one entry of a session's timeline, as the "item" template shows
// it. Kind picks its look; Markdown is rendered safely, Pre is shown as is
// (escaped), in a collapsible block when Fold is set.
type item struct {
	Seq      int64
	Type     string
	Kind     string
	At       time.Time
	Title    string
	Markdown string
	Pre      string
	Fold     bool
	Error    bool
	Facts    []tools.Fact
	Options  []engine.Option
	Steps    []engine.PlanStep
	// Approval links the approval the entry is about.
	Approval string
	// Connect links the connections page for the account ConnectTo a
	// call needed.
	ConnectTo, Connect string
}

// timelineItem turns an event into its timeline entry; ok is false for
// events the timeline leaves out (tool progress is shown by its result).
func timelineItem(ev engine.Event) (it item, ok bool) {
	it = item{Seq: ev.Seq, Type: ev.Type, At: ev.CreatedAt, Kind: "note"}
	p, err := ev.Decode()
	if err != nil {
		it.Kind, it.Error, it.Title, it.Pre = "error", true, "unreadable "+ev.Type+" event", string(ev.Data)
		return it, true
	}
	switch p := p.(type) {
	case engine.Input:
		it.Kind, it.Title, it.Markdown = "user", orDefault(p.Author, "user"), p.Text
		if p.Answer != nil {
			it.Title += " answered"
			if p.Text == "" {
				it.Markdown = orDefault(p.Answer.Text, p.Answer.Value)
			}
		}
		if p.RetryOf != "" {
			it.Title += " (retry)"
		}
	case engine.AgentMessage:
		it.Kind, it.Title, it.Markdown = "agent", "agent", p.Text
	case engine.ToolCall:
		it.Kind, it.Title, it.Pre, it.Fold = "tool", "called "+p.Name, pretty(p.Input), true
	case engine.ToolProgress:
		provider, link := connectLinkOf(p, ev.SessionID)
		if link == "" {
			return it, false
		}
		it.Title, it.ConnectTo, it.Connect = p.Name+" needs a connection to "+provider, provider, link
	case engine.ToolCallResult:
		it.Kind, it.Fold, it.Error = "result", true, p.Result.IsError
		it.Title = p.Name + " returned"
		switch {
		case p.Result.UnknownOutcome:
			it.Title = p.Name + " failed (outcome unknown)"
		case p.Result.IsError:
			it.Title = p.Name + " failed"
		}
		var parts []string
		for _, c := range p.Result.Content {
			parts = append(parts, c.Text)
		}
		it.Pre = clip(strings.Join(parts, "\n"), maxPretty)
	case engine.Question:
		it.Kind, it.Title, it.Markdown, it.Options = "question", "agent asked", p.Text, p.Options
	case engine.ApprovalRequested:
		it.Kind, it.Title, it.Facts, it.Approval = "approval", "approval requested: "+orDefault(p.Title, p.Tool), p.Facts, p.ApprovalID
		if p.RequestedBy != "" {
			it.Facts = append(it.Facts, tools.Fact{Label: "Requested by", Value: p.RequestedBy})
		}
	case engine.ApprovalDecided:
		verb := "approved"
		if p.Decision == engine.DecisionDeny {
			verb = "denied"
		}
		it.Kind, it.Title, it.Approval = "approval", fmt.Sprintf("%s %s: %s", p.By, verb, orDefault(p.Title, p.Tool)), p.ApprovalID
		// The approver's comment or reason, where the event records one.
		var c struct {
			Comment string `json:"comment"`
		}
		if json.Unmarshal(ev.Data, &c) == nil {
			it.Markdown = c.Comment
		}
	case engine.ApplySucceeded:
		it.Kind, it.Title, it.Pre, it.Fold, it.Approval = "approval", "applied: "+p.Tool, pretty(p.Output), len(p.Output) > 0, p.ApprovalID
	case engine.ApplyFailed:
		it.Kind, it.Title, it.Pre, it.Error, it.Approval = "approval", "apply failed: "+p.Tool, p.Error, true, p.ApprovalID
	case engine.ApplyUnconfirmed:
		it.Kind, it.Title, it.Pre, it.Error, it.Approval = "approval", "apply unconfirmed: "+p.Tool, p.Error, true, p.ApprovalID
	case engine.ApprovalExpiry:
		it.Kind, it.Title, it.Approval = "approval", "approval expired", p.ApprovalID
	case engine.ApprovalRetried:
		it.Kind, it.Title, it.Approval = "approval", fmt.Sprintf("%s retried the apply (attempt %d)", p.By, p.Attempt), p.ApprovalID
	case engine.ResultRecord:
		it.Kind, it.Title, it.Pre, it.Fold = "result", "result committed", pretty(p.Data), true
	case engine.SessionError:
		it.Kind, it.Error, it.Title, it.Markdown = "error", true, "error "+p.Code, p.Message
	case engine.SessionContext:
		it.Kind, it.Title, it.Pre, it.Fold = "note", "context", p.Text, true
	case engine.SessionStatus:
		it.Kind, it.Title = "status", "status "+string(p.Status)
		if p.Reason != "" {
			it.Title += " (" + p.Reason + ")"
		}
	case engine.TurnStarted:
		it.Kind, it.Title = "turn", "turn started"
	case engine.TurnCompleted:
		it.Kind, it.Title = "turn", fmt.Sprintf("turn %s · %d rounds · %d in / %d out tokens", p.Outcome, p.Rounds, p.Usage.InputTokens, p.Usage.OutputTokens)
		it.Error = p.Outcome == engine.OutcomeFailed
		if p.Code != "" {
			it.Title += " · " + p.Code
		}
	case engine.PlanUpdated:
		it.Kind, it.Title, it.Steps = "plan", "plan", p.Steps
	default:
		// A type this version does not know (a compaction, feedback ...):
		// show its name and data, folded.
		it.Title, it.Pre, it.Fold = strings.ReplaceAll(ev.Type, ".", " "), pretty(ev.Data), true
	}
	return it, true
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// summary is what the sessions list shows of a session beyond its row.
type summary struct {
	Title string
}

// summaryPage is how many events a page reads from the log at a time.
const summaryPage = 1000

// summarize reads a session's first events for its title (the first
// message).
func summarize(evs []engine.Event, sum *summary) {
	for _, ev := range evs {
		if ev.Type == engine.EventUserMessage && sum.Title == "" {
			var in engine.Input
			if json.Unmarshal(ev.Data, &in) == nil {
				sum.Title = clip(firstLine(in.Text), 120)
			}
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
