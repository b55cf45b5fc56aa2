package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"brain/engine"
)

// The card's buttons that open a form, and the form they open.
const (
	ActionApproveComment = "brain_approve_comment"
	ActionDenyReason     = "brain_deny_reason"
	// CallbackDecision is the callback id of the decision form; its
	// submission carries the comment in CommentField.
	CallbackDecision = "brain_decision"
	// CommentField is the key of the form's text in a submission's values
	// ("block_id.action_id").
	CommentField = commentBlock + "." + commentAction
	commentBlock = "brain_comment"
	// commentAction names the input element inside commentBlock.
	commentAction = "comment"
)

// DecisionForm is what the decision form remembers (its private metadata):
// which approval, approve or deny, and the card it was opened from, so a
// refusal can be told to the person where they clicked.
type DecisionForm struct {
	Approval string `json:"a"`
	Approve  bool   `json:"ok,omitempty"`
	Channel  string `json:"c,omitempty"`
	ThreadTS string `json:"t,omitempty"`
}

// ParseDecisionForm reads a submitted form's metadata.
func ParseDecisionForm(metadata string) (DecisionForm, error) {
	var f DecisionForm
	if err := json.Unmarshal([]byte(metadata), &f); err != nil {
		return DecisionForm{}, fmt.Errorf("decode decision form: %w", err)
	}
	if f.Approval == "" {
		return DecisionForm{}, errors.New("decode decision form: no approval")
	}
	return f, nil
}

// OpenDecisionForm opens the modal for "Approve with comment" (optional
// text) or "Deny with reason" (required text). The trigger id of the click
// is valid for about 3 seconds.
func (p *Poster) OpenDecisionForm(ctx context.Context, triggerID string, a engine.Approval, f DecisionForm) error {
	meta, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("decision form %s: %w", a.ID, err)
	}
	view := decisionView(a, f.Approve, string(meta))
	err = p.call(ctx, "views", func(ctx context.Context) error {
		_, err := p.api.OpenViewContext(ctx, triggerID, view)
		return err
	})
	if err != nil {
		return fmt.Errorf("open decision form %s: %w", a.ID, err)
	}
	return nil
}

func decisionView(a engine.Approval, approve bool, meta string) slack.ModalViewRequest {
	title, submit, label, hint := "Deny", "Deny", "Reason", "The agent sees this reason in its next turn."
	if approve {
		title, submit, label, hint = "Approve", "Approve", "Comment (optional)", "The agent sees this comment in its next turn."
	}
	what := strings.TrimSpace(a.Card.Title)
	if what == "" {
		what = a.Tool
	}
	input := slack.NewPlainTextInputBlockElement(plain(hint), commentAction)
	input.Multiline = true
	input.MaxLength = engine.MaxComment
	block := slack.NewInputBlock(commentBlock, plain(label), nil, input)
	block.Optional = approve
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plain(title),
		Submit:          plain(submit),
		Close:           plain("Cancel"),
		CallbackID:      CallbackDecision,
		PrivateMetadata: meta,
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			section("brain_what", "*"+Escape(truncate(what, maxHeader))+"*"),
			block,
		}},
	}
}
