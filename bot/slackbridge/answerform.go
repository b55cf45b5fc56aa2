package slackbridge

import (
	"context"
	"errors"
	"fmt"

	"brain/bot/bridge"
	"brain/channels/slack"
	"brain/engine"
	"brain/tools"
	"brain/webhooks/slackhook"
)

// openAnswerForm answers "Answer…" on a tool's request for input: the
// form opens only for the person who may answer, on the open question.
func (b *Bridge) openAnswerForm(ctx context.Context, a slackhook.Action, v slack.ButtonValue, notify func(string) error) error {
	s, q, msg := b.answerable(ctx, v.Session, v.Question, a.User)
	if msg != "" {
		return notify(msg)
	}
	f := slack.AnswerForm{Session: s.ID, Question: q.ID, Channel: a.Channel, ThreadTS: a.ThreadTS}
	if err := b.poster.OpenAnswerForm(ctx, a.TriggerID, *q, f); err != nil {
		b.log.Warn("slack answer form not opened", tools.LogSession, s.ID, tools.LogErr, err)
		return notify("The form could not be opened in time; click the button again.")
	}
	return nil
}

// answerable returns the session and its open question when user may
// answer it, else the notice to show them.
func (b *Bridge) answerable(ctx context.Context, sessionID, questionID, user string) (engine.Session, *engine.Question, string) {
	s, err := b.eng.Session(ctx, sessionID)
	if err != nil {
		return s, nil, "This question belongs to a session that no longer exists."
	}
	if s.StartedBy != user {
		return s, nil, fmt.Sprintf("Only <@%s> can answer this question.", s.StartedBy)
	}
	q := s.OpenQuestion()
	if q == nil || q.ID != questionID {
		return s, nil, "This question is already closed."
	}
	return s, q, ""
}

// onAnswerForm records a submitted answer form, its values checked
// against the form's fields; what is wrong is told where they clicked.
func (b *Bridge) onAnswerForm(ctx context.Context, sub slackhook.Submission) error {
	f, err := slack.ParseAnswerForm(sub.Metadata)
	if err != nil {
		return nil // not our form, or a forged one
	}
	notify := func(text string) error {
		if f.Channel == "" {
			return nil
		}
		return b.poster.Ephemeral(ctx, f.Channel, sub.User, f.ThreadTS, text)
	}
	s, q, msg := b.answerable(ctx, f.Session, f.Question, sub.User)
	if msg != "" {
		return notify(msg)
	}
	text, err := slack.AnswerText(*q, sub.Values)
	if err != nil {
		return notify(fmt.Sprintf("Not sent: %v. Click Answer… again.", err))
	}
	_, _, err = b.eng.Send(ctx, s.ID, engine.Input{
		Text: text, Author: sub.User, IdempotencyKey: "slack-answer:" + q.ID,
		Answer: &engine.Answer{QuestionID: q.ID, Text: text},
	})
	switch {
	case errors.Is(err, engine.ErrOverloaded):
		return bridge.ErrRetryLater
	case errors.Is(err, engine.ErrConflict), errors.Is(err, engine.ErrInvalid):
		return notify("This question is already closed.")
	}
	return err
}
