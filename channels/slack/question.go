package slack

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"brain/engine"
)

// maxButtonText is Slack's limit on a button label.
const maxButtonText = 75

// PostQuestion posts q in the thread: its text, then one button per option.
// Every button has action_id ActionAnswer and the value
// {"s":sessionID,"q":q.ID,"v":option value}. Slack rejects two elements
// with one action_id in the same actions block, so each button sits in its
// own actions block (one per row). A question without options shows a hint
// to answer in the thread.
func (p *Poster) PostQuestion(ctx context.Context, channel, threadTS string, q engine.Question, sessionID string) (string, error) {
	text := clip(Mrkdwn(q.Text), maxSection)
	if text == "" {
		text = "(question)"
	}
	blocks := []slack.Block{section(p.blockID("question"), text)}
	for _, o := range q.Options {
		v, err := encodeValue(ButtonValue{Session: sessionID, Question: q.ID, Value: o.Value})
		if err != nil {
			return "", fmt.Errorf("question %s option %q: %w", q.ID, o.Value, err)
		}
		label := o.Label
		if label == "" {
			label = o.Value
		}
		blocks = append(blocks, slack.NewActionBlock(p.blockID("answer"),
			slack.NewButtonBlockElement(ActionAnswer, v, plain(truncate(label, maxButtonText)))))
	}
	extra, err := p.extraButtons(q, sessionID)
	if err != nil {
		return "", fmt.Errorf("question %s: %w", q.ID, err)
	}
	blocks = append(blocks, extra...)
	if len(q.Options) == 0 {
		blocks = append(blocks, contextLine(p.blockID("hint"), "Reply in this thread to answer."))
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	ts, err := p.post(ctx, channel, opts...)
	if err != nil {
		return "", fmt.Errorf("post question %s: %w", q.ID, err)
	}
	return ts, nil
}

// CloseQuestion replaces the question's buttons with text (mrkdwn sent as
// is, e.g. "*Yes* (chosen by <@U1>)" or "closed (timed out)"), with fresh
// block ids.
func (p *Poster) CloseQuestion(ctx context.Context, channel, ts string, q engine.Question, text string) error {
	question := clip(Mrkdwn(q.Text), maxSection)
	if question == "" {
		question = "(question)"
	}
	outcome := clip(text, maxSection)
	blocks := []slack.Block{section(p.blockID("question"), question)}
	if outcome != "" {
		blocks = append(blocks, section(p.blockID("closed"), outcome))
	}
	err := p.update(ctx, channel, ts,
		slack.MsgOptionText(truncate(question+"\n"+outcome, maxSection), false),
		slack.MsgOptionBlocks(blocks...))
	if err != nil {
		return fmt.Errorf("close question %s: %w", q.ID, err)
	}
	return nil
}
