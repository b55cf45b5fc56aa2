package slack

import (
	"context"
	"log/slog"
	"time"

	"brain/engine"
	"brain/store"
	"brain/tools"
)

// Approvals is what the renderer reads of the engine; *engine.Engine has it.
type Approvals interface {
	engine.ApprovalReader
}

var _ Approvals = (*engine.Engine)(nil)

// Renderer maps a Slack session's events to its thread: the status while a
// turn runs, replies, question buttons (replaced by the choice once
// answered), approval cards (updated in place once decided) and error
// notices. It keeps the messages it updates later in Store.
type Renderer struct {
	Engine Approvals
	Store  store.PostedMessages
	Poster *Poster
	Now    func() time.Time
	Log    *slog.Logger
	// Events, when set, lets the renderer put feedback buttons under
	// final replies.
	Events EventReader
	// Audience gets copies of approval cards besides the thread.
	Audience Audience
	// Live, when set, shows text and steps while the turn runs (streamed
	// or updated in place) and Stop while it runs; nil posts each reply
	// once, as it is recorded.
	Live *Live
}

// Render renders one of the session's events in its thread; a session
// not in a Slack thread is left alone.
func (r *Renderer) Render(ctx context.Context, s engine.Session, ev engine.Event) error {
	channel, threadTS, ok := splitThreadKey(s.ThreadKey)
	if !ok {
		return nil
	}
	return r.render(ctx, s, channel, threadTS, ev)
}

// splitThreadKey parses "slack:TEAM:CHANNEL:TS".
func splitThreadKey(key string) (channel, ts string, ok bool) {
	t, ok := ParseThread(key)
	return t.Channel, t.TS, ok
}

func (r *Renderer) render(ctx context.Context, s engine.Session, channel, threadTS string, ev engine.Event) error {
	payload, err := ev.Decode()
	if err != nil {
		// Retrying cannot make it readable: skip it rather than stall the thread.
		r.Log.Warn("not delivering an unreadable event", tools.LogSession, s.ID, tools.LogErr, err)
		return nil
	}
	team, _, _, _ := threadParts(s.ThreadKey)
	switch d := payload.(type) {
	case engine.TurnStarted:
		if r.Live != nil {
			if err := r.turnBegins(ctx, s, team, channel, threadTS); err != nil {
				return err
			}
		}
		return r.Poster.SetStatus(ctx, channel, threadTS, "is thinking…")
	case engine.ToolCall:
		if r.Live != nil {
			r.Live.Task(ctx, s, ev.TurnID, toolStarted(d))
		}
		return r.Poster.SetStatus(ctx, channel, threadTS, "is using "+d.Name+"…")
	case engine.ToolCallResult:
		if r.Live != nil {
			r.Live.Task(ctx, s, ev.TurnID, toolEnded(d))
		}
		return nil
	case engine.PlanUpdated:
		if r.Live != nil {
			for _, c := range planChunks(d) {
				r.Live.Task(ctx, s, ev.TurnID, c)
			}
		}
		return nil
	case engine.ToolProgress:
		return r.Poster.SetStatus(ctx, channel, threadTS, d.Name+": "+clipText(string(d.Data), 100))
	case engine.AgentMessage:
		return r.reply(ctx, s, channel, threadTS, ev, d.Text)
	case engine.TurnCompleted:
		if r.Live != nil {
			r.Live.End(ctx, s, ev.TurnID)
			if err := r.turnEnds(ctx, s, team, channel, threadTS); err != nil {
				return err
			}
		}
		return r.Poster.ClearStatus(ctx, channel, threadTS)
	case engine.Question:
		ts, err := r.Poster.PostQuestion(ctx, channel, threadTS, d, s.ID)
		if err != nil {
			return err
		}
		return r.Store.SetPostedQuestion(ctx, r.Now(), engine.OriginSlack, s.ID, store.PostedQuestion{MessageRef: ts, Question: d})
	case engine.Input:
		if d.Answer == nil {
			return nil
		}
		text := "Answered"
		if d.Author != "" {
			text += " by <@" + Escape(d.Author) + ">"
		}
		return r.closeQuestion(ctx, s.ID, channel, text+": *"+Escape(d.Answer.Text)+"*")
	case engine.SessionStatus:
		if d.Cancelled() {
			return r.closeQuestion(ctx, s.ID, channel, "closed (cancelled)")
		}
		return nil
	case engine.ApprovalRequested:
		return r.postApproval(ctx, s, channel, threadTS, d.ApprovalID)
	case engine.ApprovalReminder:
		return r.remindApproval(ctx, channel, threadTS, d)
	case engine.ApprovalUpdate:
		return r.updateApproval(ctx, channel, d.UpdatedApproval())
	case engine.SessionError:
		if d.Code == engine.CodeInputCancelled {
			// Every acknowledged message is answered or reported: say
			// which one was not run (the stop's own error, with its
			// Resume button, comes first).
			_, err := r.Poster.Reply(ctx, channel, threadTS, NotAnswered(d))
			return err
		}
		_, err := r.Poster.PostError(ctx, channel, threadTS, d.Code, d.Message, s.ID)
		return err
	}
	return nil
}

func (r *Renderer) closeQuestion(ctx context.Context, sessionID, channel, text string) error {
	pq, ok, err := r.Store.PostedQuestion(ctx, engine.OriginSlack, sessionID)
	if err != nil || !ok {
		return err
	}
	if err := r.Poster.CloseQuestion(ctx, channel, pq.MessageRef, pq.Question, text); err != nil {
		return err
	}
	return r.Store.ClearPostedQuestion(ctx, engine.OriginSlack, sessionID)
}

// clipText keeps the first n runes of s, marking a cut with "…".
func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// NotAnswered is the notice (Markdown, for Reply) for a message a stop or
// cancel left unanswered; the message's words are quoted literally.
func NotAnswered(d engine.SessionError) string {
	what := "A message"
	if d.Input != "" {
		what = "Your message " + Literal(d.Input)
	}
	return ":information_source: " + what + " was " + d.Message
}
