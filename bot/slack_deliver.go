package bot

import (
	"context"
	"fmt"
	"strings"

	"brain/engine"
	"brain/engine/durable"
)

// deliver renders the session's events after its cursor. The cursor moves
// after each rendered event, so a crash re-sends at most one message.
func (b *slackBridge) deliver(ctx context.Context, s engine.Session, cursor *int64, save func() error) error {
	channel, threadTS, ok := splitThreadKey(s.ThreadKey)
	if !ok {
		return nil
	}
	for {
		evs, err := b.eng.Events(ctx, s.ID, *cursor, 100)
		if err != nil || len(evs) == 0 {
			return err
		}
		for _, ev := range evs {
			if err := b.render(ctx, s, channel, threadTS, ev); err != nil {
				return fmt.Errorf("render %s #%d: %w", ev.Type, ev.Seq, err)
			}
			*cursor = ev.Seq
			if err := save(); err != nil {
				return err
			}
		}
	}
}

// splitThreadKey parses "slack:TEAM:CHANNEL:TS".
func splitThreadKey(key string) (channel, ts string, ok bool) {
	parts := strings.Split(key, ":")
	if len(parts) != 4 || parts[0] != "slack" {
		return "", "", false
	}
	return parts[2], parts[3], true
}

func (b *slackBridge) render(ctx context.Context, s engine.Session, channel, threadTS string, ev engine.Event) error {
	payload, err := ev.Decode()
	if err != nil {
		// Retrying cannot make it readable: skip it rather than stall the thread.
		b.log.Warn("not delivering an unreadable event", logSession, s.ID, logErr, err)
		return nil
	}
	switch d := payload.(type) {
	case engine.TurnStarted:
		return b.poster.SetStatus(ctx, channel, threadTS, "is thinking…")
	case engine.ToolCall:
		return b.poster.SetStatus(ctx, channel, threadTS, "is using "+d.Name+"…")
	case engine.ToolProgress:
		return b.poster.SetStatus(ctx, channel, threadTS, d.Name+": "+clipText(string(d.Data), 100))
	case engine.AgentMessage:
		_, err := b.poster.Reply(ctx, channel, threadTS, d.Text)
		return err
	case engine.TurnCompleted:
		return b.poster.ClearStatus(ctx, channel, threadTS)
	case engine.Question:
		ts, err := b.poster.PostQuestion(ctx, channel, threadTS, d, s.ID)
		if err != nil {
			return err
		}
		return b.store.SetPostedQuestion(ctx, b.now(), engine.OriginSlack, s.ID, durable.PostedQuestion{MessageRef: ts, Question: d})
	case engine.Input:
		if d.Answer == nil {
			return nil
		}
		text := "Answered"
		if d.Author != "" {
			text += " by <@" + d.Author + ">"
		}
		return b.closeQuestion(ctx, s.ID, channel, text+": *"+d.Answer.Text+"*")
	case engine.SessionStatus:
		if d.Cancelled() {
			return b.closeQuestion(ctx, s.ID, channel, "closed (cancelled)")
		}
		return nil
	case engine.ApprovalRequested:
		a, err := b.eng.Approval(ctx, d.ApprovalID)
		if err != nil {
			return err
		}
		ts, err := b.poster.PostApproval(ctx, channel, threadTS, a)
		if err != nil {
			return err
		}
		return b.store.SetApprovalMessage(ctx, b.now(), engine.OriginSlack, a.ID, ts)
	case engine.ApprovalUpdate:
		ts, ok, err := b.store.ApprovalMessage(ctx, engine.OriginSlack, d.UpdatedApproval())
		if err != nil || !ok {
			return err
		}
		a, err := b.eng.Approval(ctx, d.UpdatedApproval())
		if err != nil {
			return err
		}
		return b.poster.UpdateApproval(ctx, channel, ts, a)
	case engine.SessionError:
		if d.Code == engine.CodeInputCancelled {
			return nil // one notice per failure is enough
		}
		_, err := b.poster.PostError(ctx, channel, threadTS, d.Code, d.Message, s.ID)
		return err
	}
	return nil
}

func (b *slackBridge) closeQuestion(ctx context.Context, sessionID, channel, text string) error {
	pq, ok, err := b.store.PostedQuestion(ctx, engine.OriginSlack, sessionID)
	if err != nil || !ok {
		return err
	}
	if err := b.poster.CloseQuestion(ctx, channel, pq.MessageRef, pq.Question, text); err != nil {
		return err
	}
	return b.store.ClearPostedQuestion(ctx, engine.OriginSlack, sessionID)
}

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
