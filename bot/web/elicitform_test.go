package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"brain/engine"
	"brain/tools"
)

// A tool's request for input shows a form with an input per field (number,
// select for enum and boolean, text); the submission is checked per
// field: a wrong value is refused with nothing sent, a right one is sent
// as the answer.
func TestConsole_ElicitationForm(t *testing.T) {
	c := newConsole(t, Config{})
	q := engine.Question{ID: "q1", Text: "The tool travel__book asks: Which seats?", Options: []engine.Option{{Label: "Decline", Value: "elicit:decline"}},
		Call: &engine.PendingCall{Tool: "travel__book", Elicitation: tools.Elicitation{Message: "Which seats?", Fields: []tools.Field{
			{Name: "count", Title: "Seats", Type: "integer", Required: true},
			{Name: "class", Type: "string", Choices: []tools.Choice{{Value: "eco", Label: "Economy"}, {Value: "biz"}}},
			{Name: "window", Type: "boolean"},
			{Name: "note", Type: "string", Default: "none"},
		}}}}
	c.eng.addSession(engine.Session{ID: "ses1", Agent: "default", Origin: engine.OriginAPI, Status: engine.StatusAwaitingInput, Interactive: true, Question: mustJSON(q)})
	_, page := c.get("/sessions/ses1")
	for _, want := range []string{`<input type="number" step="1" name="field_count">`, `<option value="eco">Economy</option>`,
		`<option value="true">Yes</option>`, `name="field_note" maxlength="4000" value="none"`, "Seats (required)", `value="elicit:decline"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	form := url.Values{"csrf": {c.csrf(page)}, "question_id": {"q1"}, "form": {"1"},
		"field_count": {"two"}, "field_class": {"biz"}, "field_window": {"true"}, "field_note": {""}}
	resp, body := c.post("/sessions/ses1/messages", form)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "is not a valid integer for count") || len(c.eng.sent) != 0 {
		t.Fatalf("invalid form: %d %+v\n%s", resp.StatusCode, c.eng.sent, body)
	}
	form.Set("field_count", "2")
	resp, _ = c.post("/sessions/ses1/messages", form)
	if resp.StatusCode != http.StatusSeeOther || len(c.eng.sent) != 1 || c.eng.sent[0].Answer == nil ||
		c.eng.sent[0].Answer.Text != "count: 2\nclass: biz\nwindow: true" {
		t.Fatalf("answer: %d %+v", resp.StatusCode, c.eng.sent)
	}
}
