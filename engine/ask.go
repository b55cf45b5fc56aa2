package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"brain/tools"
)

// AskTool is the name of the built-in question tool.
const AskTool = "ask"

// askDefinition is the tool the model sees; the engine handles its calls.
var askDefinition = tools.Definition{
	Name: AskTool,
	Description: "Ask the person you are talking to a question and end your turn; their answer arrives as the next message. " +
		"Give up to 6 options when the answer is a choice. Use it when you need a decision or information only they have.",
	Input: json.RawMessage(`{
		"type": "object",
		"properties": {
			"text": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "The question"},
			"options": {
				"type": "array", "maxItems": 6,
				"items": {
					"type": "object",
					"properties": {
						"label": {"type": "string", "minLength": 1, "maxLength": 80},
						"value": {"type": "string", "minLength": 1, "maxLength": 80}
					},
					"required": ["label", "value"],
					"additionalProperties": false
				}
			}
		},
		"required": ["text"],
		"additionalProperties": false
	}`),
	Run: func(context.Context, tools.Call) (json.RawMessage, error) {
		return nil, tools.Failed("ask is handled by the engine")
	},
}

func newAskTool() *tools.Tool {
	t, err := tools.Compile(askDefinition)
	if err != nil {
		panic(fmt.Sprintf("built-in ask tool: %v", err)) // a bug in the schema above
	}
	return t
}

// Question is an open question of a session.
type Question struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	Options []Option  `json:"options,omitempty"`
	CallID  string    `json:"call_id"`
	TurnID  string    `json:"turn_id"`
	AskedAt time.Time `json:"asked_at"`
	// Call is the tool call that waits for this answer, when a tool
	// asked (see PendingCall); nil for the ask tool's questions.
	Call *PendingCall `json:"call,omitempty"`
}

// Option is one choice of a Question.
type Option struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Answer answers the open question: Value is an option's value, Text is
// free text (or the chosen option's label).
type Answer struct {
	QuestionID string `json:"question_id"`
	Value      string `json:"value,omitempty"`
	Text       string `json:"text,omitempty"`
	// Call is the open question's pending tool call, copied by the
	// engine when the answer is recorded (never taken from a client).
	Call *PendingCall `json:"call,omitempty"`
}

// OpenQuestion decodes the session's open question, nil when none.
func (s Session) OpenQuestion() *Question {
	if len(s.Question) == 0 || string(s.Question) == "null" {
		return nil
	}
	var q Question
	if json.Unmarshal(s.Question, &q) != nil {
		return nil
	}
	return &q
}

// match returns the option whose value or label equals text (ignoring case
// and surrounding space).
func (q *Question) match(text string) (Option, bool) {
	t := strings.TrimSpace(text)
	for _, o := range q.Options {
		if strings.EqualFold(t, o.Value) || strings.EqualFold(t, o.Label) {
			return o, true
		}
	}
	return Option{}, false
}

// resolveAnswer checks an explicit answer against the open question and
// fills in the label as text when only a value was given.
func resolveAnswer(q *Question, a *Answer) error {
	if q == nil {
		return Errorf(CodeConflict, "the session has no open question")
	}
	if a.QuestionID != q.ID {
		return Errorf(CodeConflict, "question %s is not open; the open question is %s", a.QuestionID, q.ID)
	}
	if a.Value == "" && strings.TrimSpace(a.Text) == "" {
		return Errorf(CodeInvalid, "an answer needs a value or text")
	}
	if a.Value != "" {
		var chosen *Option
		for i := range q.Options {
			if q.Options[i].Value == a.Value {
				chosen = &q.Options[i]
			}
		}
		if chosen == nil {
			return Errorf(CodeInvalid, "%q is not one of the question's option values", a.Value)
		}
		if a.Text == "" {
			a.Text = chosen.Label
		}
	}
	return nil
}

// askCall validates an ask call and returns the question it opens, or the
// error result the model sees.
func (e *Engine) askCall(t *turn, call ToolCall) (*Question, toolOutcome) {
	if !t.session.Interactive {
		return nil, failed("%s", nobodyThere(t.session, "answer a question"))
	}
	if err := t.ask.ValidateInput(call.Input); err != nil {
		return nil, failed("%v", err)
	}
	if t.question != nil {
		return nil, failed("only one question can be open at a time; this turn already asked one")
	}
	var in struct {
		Text    string   `json:"text"`
		Options []Option `json:"options"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return nil, failed("arguments: %v", err)
	}
	q := &Question{ID: e.newID("q"), Text: in.Text, Options: in.Options, CallID: call.ID, TurnID: t.id, AskedAt: e.now()}
	return q, toolOutcome{Text: "The question was shown to the person. Your turn ends now; their answer arrives as the next message."}
}

// nobodyThere explains why a non-interactive session cannot ask or approve.
func nobodyThere(s Session, what string) string {
	switch {
	case s.Origin == OriginSchedule && s.StartedBy != "":
		return fmt.Sprintf("nobody can %s: this session was started by schedule %q and nobody is there to ask or approve. Finish the task without it, and say in your answer what needs a person.", what, s.StartedBy)
	case s.Origin == OriginSchedule:
		return fmt.Sprintf("nobody can %s: this session was started by a schedule and nobody is there to ask or approve. Finish the task without it, and say in your answer what needs a person.", what)
	default:
		return fmt.Sprintf("nobody can %s: this session is not interactive (created with interactive:false), so nobody is there to ask or approve. Finish the task without it, and say in your answer what needs a person.", what)
	}
}
