package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"brain/engine"
)

// Fixed action ids of our buttons. The inbound side routes on them (slack-go's
// socketmode matches action_id exactly); our own ids travel in the value.
const (
	ActionAnswer  = "brain_answer"
	ActionApprove = "brain_approve"
	ActionDeny    = "brain_deny"
	ActionRetry   = "brain_retry"
	ActionResume  = "brain_resume"
)

// maxErrorText bounds the message of an error notice.
const maxErrorText = 500

// maxMarkdown is what one message's markdown block holds.
const maxMarkdown = 12000

// Reply posts markdown in Slack's markdown block (Slack renders standard
// Markdown), split under its limit, the parts in order in the thread
// (threadTS "" posts to the channel); the notification text is the part
// converted to mrkdwn. It returns the ts of each part; a failure after
// some parts were posted returns those ts with the error. Empty text posts
// nothing. Blocks in tail go under the last part (feedback buttons).
//
// A workspace that refuses the markdown block (invalid_blocks on the first
// part) gets the reply converted to mrkdwn in section blocks instead, from
// then on.
func (p *Poster) Reply(ctx context.Context, channel, threadTS, markdown string, tail ...slack.Block) ([]string, error) {
	posted, err := p.reply(ctx, channel, threadTS, markdown, p.markdownOK(), tail)
	var refused slack.SlackErrorResponse
	if len(posted) == 0 && errors.As(err, &refused) && refused.Err == "invalid_blocks" && p.markdownOK() {
		p.mu.Lock()
		p.noMarkdown = true
		p.mu.Unlock()
		return p.reply(ctx, channel, threadTS, markdown, false, tail)
	}
	return posted, err
}

func (p *Poster) markdownOK() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.noMarkdown
}

func (p *Poster) reply(ctx context.Context, channel, threadTS, markdown string, useMarkdown bool, tail []slack.Block) ([]string, error) {
	parts := splitBeside(markdown, maxMarkdown, tailText(tail))
	if !useMarkdown {
		parts = split(Mrkdwn(markdown), maxSection)
	}
	if len(parts) == 0 {
		return nil, nil
	}
	var posted []string
	// One job for all parts, so another reply in the channel cannot land
	// between them.
	err := p.do(ctx, channel, func(ctx context.Context) error {
		for i, part := range parts {
			opts := []slack.MsgOption{
				slack.MsgOptionText(truncate(Mrkdwn(part), maxSection), false),
				slack.MsgOptionBlocks(append([]slack.Block{slack.NewMarkdownBlock(p.blockID("reply"), part)}, lastTail(i, len(parts), tail)...)...),
			}
			if !useMarkdown {
				opts = []slack.MsgOption{slack.MsgOptionText(part, false),
					slack.MsgOptionBlocks(append([]slack.Block{section(p.blockID("reply"), part)}, lastTail(i, len(parts), tail)...)...)}
			}
			if threadTS != "" {
				opts = append(opts, slack.MsgOptionTS(threadTS))
			}
			var ts string
			err := p.call(ctx, channel, func(ctx context.Context) (err error) {
				_, ts, err = p.api.PostMessageContext(ctx, channel, opts...)
				return err
			})
			if err != nil {
				return fmt.Errorf("post reply part %d of %d: %w", i+1, len(parts), err)
			}
			posted = append(posted, ts)
		}
		return nil
	})
	return posted, err
}

// Ephemeral shows text (mrkdwn, sent as is) to user only, in the thread
// when threadTS is set.
func (p *Poster) Ephemeral(ctx context.Context, channel, user, threadTS, text string) error {
	opts := []slack.MsgOption{slack.MsgOptionText(truncate(text, maxSection), false)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	err := p.do(ctx, channel, func(ctx context.Context) error {
		return p.call(ctx, channel, func(ctx context.Context) error {
			_, err := p.api.PostEphemeralContext(ctx, channel, user, opts...)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("post ephemeral to %s: %w", user, err)
	}
	return nil
}

// PostError posts a short notice with the error's code and message and,
// when sessionID is set, a Resume button. The message is shown as plain
// text, cut to its first line and maxErrorText characters: whatever the
// caller passes, a stack trace does not reach the thread.
func (p *Poster) PostError(ctx context.Context, channel, threadTS, code, message, sessionID string) (string, error) {
	first, _, _ := strings.Cut(strings.TrimSpace(message), "\n")
	text := fmt.Sprintf(":warning: `%s` %s", Escape(code), Escape(truncate(first, maxErrorText)))
	blocks := []slack.Block{section(p.blockID("error"), text)}
	if link := p.consoleLink("/sessions/", sessionID, "see the session in brain"); link != "" {
		blocks = append(blocks, contextLine(p.blockID("session"), link))
	}
	if sessionID != "" {
		v, err := encodeValue(ButtonValue{Session: sessionID})
		if err != nil {
			return "", err
		}
		blocks = append(blocks, slack.NewActionBlock(p.blockID("resume"),
			slack.NewButtonBlockElement(ActionResume, v, plain("Resume"))))
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	ts, err := p.post(ctx, channel, opts...)
	if err != nil {
		return "", fmt.Errorf("post error notice: %w", err)
	}
	return ts, nil
}

// ButtonValue is what our buttons carry in their value, JSON-encoded:
// {"s":SESSION,"q":QUESTION,"v":VALUE} for answers, {"a":APPROVAL} for
// approve, deny and retry, {"s":SESSION} for resume.
type ButtonValue struct {
	Session  string `json:"s,omitempty"`
	Question string `json:"q,omitempty"`
	Value    string `json:"v,omitempty"`
	Approval string `json:"a,omitempty"`
	// Message is the agent.message event feedback rates, or the tool
	// call a retry after connecting runs again.
	Message string `json:"m,omitempty"`
	// Tool is the tool of that call; User who may click.
	Tool string `json:"t,omitempty"`
	User string `json:"u,omitempty"`
	// Connection is the connection a Home tab Revoke forgets.
	Connection string `json:"c,omitempty"`
}

// maxValue is Slack's limit on a button value.
const maxValue = 2000

func encodeValue(v ButtonValue) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode button value: %w", err)
	}
	if len(b) > maxValue {
		return "", fmt.Errorf("button value is %d bytes, Slack allows %d", len(b), maxValue)
	}
	return string(b), nil
}

// DecodeValue parses the value of one of our buttons, checking that it has
// the fields its action needs.
func DecodeValue(actionID, value string) (ButtonValue, error) {
	var v ButtonValue
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return ButtonValue{}, fmt.Errorf("decode %s value: %w", actionID, err)
	}
	var ok bool
	switch actionID {
	case ActionAnswer, ActionAnswerForm:
		ok = v.Session != "" && v.Question != "" && v.Value != ""
	case ActionApprove, ActionDeny, ActionRetry, ActionApproveComment, ActionDenyReason:
		ok = v.Approval != ""
	case ActionResume, ActionStop:
		ok = v.Session != ""
	case ActionRevokeConnection:
		ok = v.Connection != ""
	case ActionRetryCall:
		ok = v.Session != "" && v.Message != "" && v.User != ""
	case ActionFeedback:
		ok = v.Session != "" && v.Message != "" && (v.Value == engine.FeedbackPositive || v.Value == engine.FeedbackNegative)
	default:
		return ButtonValue{}, fmt.Errorf("decode value: unknown action %q", actionID)
	}
	if !ok {
		return ButtonValue{}, fmt.Errorf("decode %s value: missing fields in %q", actionID, value)
	}
	return v, nil
}

// lastTail is tail for the last of n parts, nil for the others.
// splitBeside is split, with the last part leaving room for reserve
// characters of the tail that goes under it: a message's blocks hold
// maxMarkdown characters of text in all.
func splitBeside(text string, limit, reserve int) []string {
	reserve = min(reserve, limit/2) // a tail that long is refused anyway; never cut at nothing
	parts := split(text, limit)
	n := len(parts)
	if n == 0 || reserve == 0 || utf8.RuneCountInString(parts[n-1])+reserve <= limit {
		return parts
	}
	return append(parts[:n-1], split(parts[n-1], limit-reserve)...)
}

// tailText counts the characters of text the tail's context lines carry.
func tailText(tail []slack.Block) int {
	n := 0
	for _, b := range tail {
		if c, ok := b.(*slack.ContextBlock); ok {
			for _, e := range c.ContextElements.Elements {
				if t, ok := e.(*slack.TextBlockObject); ok {
					n += utf8.RuneCountInString(t.Text)
				}
			}
		}
	}
	return n
}

func lastTail(i, n int, tail []slack.Block) []slack.Block {
	if i == n-1 {
		return tail
	}
	return nil
}

func plain(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, text, false, false)
}

func mrkdwn(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, text, false, false)
}

func section(id, text string) *slack.SectionBlock {
	return slack.NewSectionBlock(mrkdwn(text), nil, nil, slack.SectionBlockOptionBlockID(id))
}

func contextLine(id, text string) *slack.ContextBlock {
	return slack.NewContextBlock(id, mrkdwn(text))
}
