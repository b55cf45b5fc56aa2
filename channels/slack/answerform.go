package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"brain/engine"
	"brain/tools"
)

// A tool's request for input whose form has text or number fields gets an
// "Answer…" button beside its other buttons: it opens a modal with one
// input per field (a number input for numbers), whose submission is
// checked against each field's type and recorded as the answer, the
// reply the thread would otherwise take as "name: value" lines. URL mode
// gets a link button that opens the page in the person's browser (brain
// never fetches it); Done answers.
const (
	// ActionAnswerForm is the "Answer…" button; its value names the
	// session and the question.
	ActionAnswerForm = "brain_answer_form"
	// ActionOpenURL is URL mode's link button: Slack opens the page and
	// still sends the click, which is ignored.
	ActionOpenURL = "brain_open_url"
	// CallbackAnswer is the callback id of the answer form.
	CallbackAnswer = "brain_answer"
	// fieldAction names the input element of each field's block, whose
	// block id is fieldBlock + the field's index.
	fieldAction = "value"
	fieldBlock  = "brain_field_"
)

// maxFormFields is the most inputs an answer form shows (a modal holds
// 100 blocks; the inbox takes at most maxInputs values).
const maxFormFields = 20

// AnswerForm is what the answer form remembers (its private metadata).
type AnswerForm struct {
	Session  string `json:"s"`
	Question string `json:"q"`
	Channel  string `json:"c,omitempty"`
	ThreadTS string `json:"t,omitempty"`
}

// ParseAnswerForm reads a submitted answer form's metadata.
func ParseAnswerForm(metadata string) (AnswerForm, error) {
	var f AnswerForm
	if err := json.Unmarshal([]byte(metadata), &f); err != nil {
		return AnswerForm{}, fmt.Errorf("decode answer form: %w", err)
	}
	if f.Session == "" || f.Question == "" {
		return AnswerForm{}, errors.New("decode answer form: no question")
	}
	return f, nil
}

// needsForm reports whether q asks, through a tool, for text or numbers
// a modal is better at than a typed reply.
func needsForm(q engine.Question) bool {
	if q.Call == nil || q.Call.Elicitation.URL != "" || len(q.Call.Elicitation.Fields) > maxFormFields {
		return false
	}
	for _, f := range q.Call.Elicitation.Fields {
		if f.Type == "number" || f.Type == "integer" || (f.Type == "string" && len(f.Choices) == 0) {
			return true
		}
	}
	return false
}

// extraButtons are the question's buttons besides its options: Answer…
// for forms, the link of URL mode.
func (p *Poster) extraButtons(q engine.Question, sessionID string) ([]slack.Block, error) {
	switch {
	case q.Call != nil && q.Call.Elicitation.URL != "":
		b := slack.NewButtonBlockElement(ActionOpenURL, "", plain("Open the page"))
		b.URL = q.Call.Elicitation.URL
		return []slack.Block{slack.NewActionBlock(p.blockID("open"), b)}, nil
	case needsForm(q):
		v, err := encodeValue(ButtonValue{Session: sessionID, Question: q.ID, Value: "form"})
		if err != nil {
			return nil, err
		}
		return []slack.Block{slack.NewActionBlock(p.blockID("form"),
			slack.NewButtonBlockElement(ActionAnswerForm, v, plain("Answer…")))}, nil
	}
	return nil, nil
}

// OpenAnswerForm opens the modal of q's form. The trigger id of the click
// is valid for about 3 seconds.
func (p *Poster) OpenAnswerForm(ctx context.Context, triggerID string, q engine.Question, f AnswerForm) error {
	if q.Call == nil {
		return fmt.Errorf("question %s has no form", q.ID)
	}
	meta, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("answer form %s: %w", q.ID, err)
	}
	blocks := []slack.Block{section("brain_what", clip(Mrkdwn(q.Call.Elicitation.Message), maxSection))}
	for i, fd := range q.Call.Elicitation.Fields {
		blocks = append(blocks, fieldInput(i, fd))
	}
	view := slack.ModalViewRequest{
		Type: slack.VTModal, Title: plain("Answer"), Submit: plain("Send"), Close: plain("Cancel"),
		CallbackID: CallbackAnswer, PrivateMetadata: string(meta),
		Blocks: slack.Blocks{BlockSet: blocks},
	}
	err = p.call(ctx, "views", func(ctx context.Context) error {
		_, err := p.api.OpenViewContext(ctx, triggerID, view)
		return err
	})
	if err != nil {
		return fmt.Errorf("open answer form %s: %w", q.ID, err)
	}
	return nil
}

func fieldInput(i int, f tools.Field) slack.Block {
	label := f.Title
	if label == "" {
		label = f.Name
	}
	hint := f.Description
	if len(f.Choices) > 0 {
		vals := make([]string, len(f.Choices))
		for j, c := range f.Choices {
			vals[j] = c.Value
		}
		hint = "One of: " + strings.Join(vals, ", ")
	} else if f.Type == "boolean" {
		hint = "yes or no"
	}
	var el slack.BlockElement
	initial := ""
	if f.Default != nil {
		initial = fmt.Sprint(f.Default)
	}
	switch f.Type {
	case "number", "integer":
		n := slack.NewNumberInputBlockElement(nil, fieldAction, f.Type == "number")
		n.InitialValue = initial
		el = n
	default:
		t := slack.NewPlainTextInputBlockElement(nil, fieldAction)
		t.InitialValue = initial
		el = t
	}
	var hintText *slack.TextBlockObject
	if hint != "" {
		hintText = plain(truncate(hint, 150))
	}
	b := slack.NewInputBlock(fieldBlock+strconv.Itoa(i), plain(truncate(label, 2000)), hintText, el)
	b.Optional = !f.Required || f.Default != nil
	return b
}

// AnswerText checks a submitted answer form against q's fields and
// returns the answer's text (engine.Question.FormAnswer).
func AnswerText(q engine.Question, values map[string]string) (string, error) {
	if q.Call == nil {
		return "", errors.New("the question has no form")
	}
	byName := map[string]string{}
	for i, f := range q.Call.Elicitation.Fields {
		byName[f.Name] = values[fieldBlock+strconv.Itoa(i)+"."+fieldAction]
	}
	return q.FormAnswer(byName)
}
