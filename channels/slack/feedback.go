package slack

import (
	"context"

	"github.com/slack-go/slack"

	"brain/engine"
)

// ActionFeedback is the action id of the feedback buttons under final
// replies; each button's value is a ButtonValue naming the session, the
// agent.message event and the rating.
const ActionFeedback = "brain_feedback"

// EventReader is what the renderer reads to tell a final reply from one
// followed by tool calls; *engine.Engine has it.
type EventReader interface {
	engine.Log
}

// feedbackBlock is Slack's context_actions block with feedback buttons
// rating the agent.message messageID of sessionID.
func (p *Poster) feedbackBlock(sessionID, messageID string) (slack.Block, error) {
	button := func(emoji, label, rating string) (*slack.FeedbackButton, error) {
		v, err := encodeValue(ButtonValue{Session: sessionID, Message: messageID, Value: rating})
		if err != nil {
			return nil, err
		}
		return slack.NewFeedbackButton(plain(emoji), v).WithAccessibilityLabel(label), nil
	}
	good, err := button("👍", "Good answer", engine.FeedbackPositive)
	if err != nil {
		return nil, err
	}
	bad, err := button("👎", "Bad answer", engine.FeedbackNegative)
	if err != nil {
		return nil, err
	}
	return slack.NewContextActionsBlock(p.blockID("feedback"),
		slack.NewFeedbackButtonsBlockElement(ActionFeedback, good, bad)), nil
}

// isFinalReply reports whether the agent.message ev ends its model round
// without tool calls: the calls of a round are committed with its text, so
// the next event, if any, already tells.
func isFinalReply(ctx context.Context, events EventReader, s engine.Session, ev engine.Event) (bool, error) {
	next, err := events.Events(ctx, s.ID, ev.Seq, 1)
	if err != nil {
		return false, err
	}
	return len(next) == 0 || next[0].Type != engine.EventToolCall, nil
}

// reply shows an agent message: in the turn's live reply when one is
// streaming (the tail then goes under it when the stream stops), else
// posted, with the tail under its last part. A final reply's tail, when
// the renderer can tell, is a link to the session in the console (when
// there is one) and the feedback buttons.
func (r *Renderer) reply(ctx context.Context, s engine.Session, channel, threadTS string, ev engine.Event, text string) error {
	var tail []slack.Block
	if r.Events != nil {
		final, err := isFinalReply(ctx, r.Events, s, ev)
		if err != nil {
			return err
		}
		if final {
			if link := r.Poster.consoleLink("/sessions/", s.ID, "open in brain"); link != "" {
				tail = append(tail, contextLine(r.Poster.blockID("console"), link))
			}
			b, err := r.Poster.feedbackBlock(s.ID, ev.ID)
			if err != nil {
				return err
			}
			tail = append(tail, b)
		}
	}
	if r.Live != nil && r.Live.Message(ctx, s, ev.TurnID, text) {
		r.Live.Tail(s.ID, ev.TurnID, tail)
		return nil
	}
	_, err := r.Poster.Reply(ctx, channel, threadTS, text, tail...)
	return err
}
