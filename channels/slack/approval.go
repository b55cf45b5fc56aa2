package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"brain/engine"
)

// Card limits: Slack's, and how much apply output a card shows.
const (
	maxHeader     = 150
	maxFields     = 10
	maxFieldText  = 2000
	maxOutputText = 500
)

// reSlackUser matches a Slack user id, which renders as a mention.
var reSlackUser = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)

// PostApproval posts an approval card in the thread and returns its ts.
func (p *Poster) PostApproval(ctx context.Context, channel, threadTS string, a engine.Approval) (string, error) {
	blocks, text, err := p.approvalBlocks(a)
	if err != nil {
		return "", err
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if threadTS != "" {
		opts = append(opts, slack.MsgOptionTS(threadTS))
	}
	ts, err := p.post(ctx, channel, opts...)
	if err != nil {
		return "", fmt.Errorf("post approval %s: %w", a.ID, err)
	}
	return ts, nil
}

// UpdateApproval re-renders the card at ts for a's status; once decided it
// has no Approve/Deny buttons, so it cannot be clicked twice.
func (p *Poster) UpdateApproval(ctx context.Context, channel, ts string, a engine.Approval) error {
	blocks, text, err := p.approvalBlocks(a)
	if err != nil {
		return err
	}
	if err := p.update(ctx, channel, ts, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)); err != nil {
		return fmt.Errorf("update approval %s: %w", a.ID, err)
	}
	return nil
}

// approvalBlocks renders a card: header, facts, who asked and until when,
// then the buttons (pending) or the outcome. It returns the fallback text.
func (p *Poster) approvalBlocks(a engine.Approval) ([]slack.Block, string, error) {
	title := strings.TrimSpace(a.Card.Title)
	if title == "" {
		title = a.Tool
	}
	if title == "" {
		title = "Approval"
	}
	head := []slack.Block{slack.NewHeaderBlock(plain(truncate(title, maxHeader)),
		slack.HeaderBlockOptionBlockID(p.blockID("card")))}

	var fields []*slack.TextBlockObject
	for _, f := range a.Card.Facts {
		label := Escape(truncate(f.Label, 200))
		value := Escape(f.Value)
		if value == "" {
			value = "—"
		}
		fields = append(fields, mrkdwn(clip("*"+label+"*\n"+value, maxFieldText)))
	}
	var blocks []slack.Block // what follows the facts

	var meta []string
	if a.RequestedBy != "" {
		meta = append(meta, "requested by "+person(a.RequestedBy))
	}
	if !a.ExpiresAt.IsZero() && (a.Status == engine.ApprovalPending || a.Status == engine.ApprovalExpired) {
		meta = append(meta, "expires "+slackDate(a.ExpiresAt))
	}
	if link := p.consoleLink("/approvals/", a.ID, "open in brain"); link != "" {
		meta = append(meta, link)
	}
	if len(meta) > 0 {
		blocks = append(blocks, contextLine(p.blockID("meta"), strings.Join(meta, " · ")))
	}

	outcome := approvalOutcome(a)
	value, err := encodeValue(ButtonValue{Approval: a.ID})
	if err != nil {
		return nil, "", fmt.Errorf("approval %s: %w", a.ID, err)
	}
	switch a.Status {
	case engine.ApprovalPending:
		if line := votesLine(a); line != "" {
			blocks = append(blocks, contextLine(p.blockID("votes"), line))
		}
		blocks = append(blocks, decideButtons(p.blockID("decide"), value))
		return p.card(head, fields, blocks, a), "Approval needed: " + Escape(truncate(title, maxHeader)), nil
	case engine.ApprovalApplied:
		blocks = append(blocks, section(p.blockID("outcome"), outcome))
		blocks = appendComment(blocks, p.blockID("comment"), a)
		if out := outputExcerpt(a.Output); out != "" {
			blocks = append(blocks, section(p.blockID("output"), "```\n"+out+"\n```"))
		}
	case engine.ApprovalUnconfirmed:
		blocks = append(blocks, section(p.blockID("outcome"), outcome),
			slack.NewActionBlock(p.blockID("retry"),
				slack.NewButtonBlockElement(ActionRetry, value, plain("Retry"))))
	default:
		blocks = append(blocks, section(p.blockID("outcome"), outcome))
		blocks = appendComment(blocks, p.blockID("comment"), a)
	}
	return p.card(head, fields, blocks, a), Escape(truncate(title, maxHeader)) + ": " + outcome, nil
}

// card lays out the facts between head and tail within Block Kit's limits
// as a whole; facts that do not fit are summarised with a link to the
// approval's page in the web console, or else in the API (under
// public_url), when brain knows its address.
func (p *Poster) card(head []slack.Block, facts []*slack.TextBlockObject, tail []slack.Block, a engine.Approval) []slack.Block {
	link := ""
	switch {
	case p.consoleURL != "":
		link = p.consoleURL + "/approvals/" + url.PathEscape(a.ID)
	case p.publicURL != "":
		link = strings.TrimSuffix(p.publicURL, "/") + "/v1/approvals/" + url.PathEscape(a.ID)
	}
	return fitItems(head, facts, maxFields, tail, p.blockID, "fact", link)
}

// approvalOutcome is the status line of a decided card.
func approvalOutcome(a engine.Approval) string {
	by := decidedBy(a)
	reason := func() string {
		first, _, _ := strings.Cut(strings.TrimSpace(a.Error), "\n")
		if first == "" {
			first = "unknown error"
		}
		return Escape(truncate(first, maxErrorText))
	}
	switch a.Status {
	case engine.ApprovalApproved, engine.ApprovalApplying:
		if a.ByPolicy() {
			return "approved under policy " + Escape(a.Policy) + ", applying…"
		}
		return "approved by " + by + ", applying…"
	case engine.ApprovalApplied:
		if a.ByPolicy() {
			return "applied under policy " + Escape(a.Policy)
		}
		return "approved by " + by + " · applied"
	case engine.ApprovalFailed:
		return "apply failed: " + reason()
	case engine.ApprovalUnconfirmed:
		return "unconfirmed: " + reason()
	case engine.ApprovalDenied:
		return "denied by " + by
	case engine.ApprovalExpired:
		return expiredLine(a)
	default:
		return Escape(string(a.Status))
	}
}

// person renders who decided or asked: a mention for a Slack user id,
// escaped text for anyone else (an API key's name, say).
func person(id string) string {
	if reSlackUser.MatchString(id) {
		return "<@" + id + ">"
	}
	return Escape(id)
}

// slackDate renders t in the reader's time zone, with UTC as fallback.
func slackDate(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} {time}|%s>", t.Unix(), t.UTC().Format("2006-01-02 15:04 UTC"))
}

// outputExcerpt is apply's output for a code block: a JSON string shows
// its text, anything else its JSON, cut to maxOutputText.
func outputExcerpt(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	text := string(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = s
	}
	text = strings.TrimSpace(strings.ReplaceAll(text, "```", "'''"))
	return Escape(truncate(text, maxOutputText))
}
