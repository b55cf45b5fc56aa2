package httptool_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"brain/tools"
	"brain/tools/httptool"
	"brain/tools/toolstest"
)

func TestPreview_RendersCardWithoutRequest(t *testing.T) {
	tg := toolstest.NewRecorder(t, reply(http.StatusOK, `{}`))
	spec := ticketSpec(tg.URL + "/api/tickets")
	spec.Approval = &httptool.Approval{
		Title: "  Create ticket {{.title}}\n in {{.project}} ",
		Facts: []httptool.Fact{
			{Label: "Title", Value: "{{.title}}"},
			{Label: "Priority", Value: "{{.priority}}"},
			{Label: "Missing", Value: "{{.assignee}}"},
			{Label: "Labels", Value: "{{json .labels}}"},
			{Label: "{{if .urgent}}Urgent{{else}}Normal{{end}}", Value: "{{.notes}}"},
		},
	}
	tool := compile(t, spec, nil)
	long := strings.Repeat("n", 3000)
	card, err := tool.Preview(context.Background(), call(`{"title":"Printer on fire","project":"OPS","priority":10000000000000000001,"labels":["hw","p1"],"urgent":true,"notes":"`+long+`"}`))
	if err != nil {
		t.Fatalf("Preview: %v", err)
	}
	if card.Title != "Create ticket Printer on fire in OPS" {
		t.Errorf("title = %q", card.Title)
	}
	want := []tools.Fact{
		{Label: "Title", Value: "Printer on fire"},
		{Label: "Priority", Value: "10000000000000000001"},
		{Label: "Missing", Value: ""},
		{Label: "Labels", Value: `["hw","p1"]`},
		{Label: "Urgent", Value: strings.Repeat("n", 1999) + "…"},
	}
	if len(card.Facts) != len(want) {
		t.Fatalf("facts = %+v", card.Facts)
	}
	for i, w := range want {
		if card.Facts[i] != w {
			t.Errorf("fact %d = %.60q, want %.60q", i, card.Facts[i], w)
		}
	}
	if n := len(tg.Requests()); n != 0 {
		t.Errorf("preview sent %d requests; it must not call the service", n)
	}
}

func TestPreview_Bounds(t *testing.T) {
	spec := ticketSpec("https://tickets.example/api")
	spec.Approval = &httptool.Approval{Title: "{{.title}}", Facts: []httptool.Fact{{Label: "Nested", Value: "{{.title.deep}}"}}}
	tool := compile(t, spec, nil)

	spec.Approval.Facts = nil
	titleOnly := compile(t, spec, nil)
	card, err := titleOnly.Preview(context.Background(), call(`{"title":"`+strings.Repeat("ü", 400)+`"}`))
	if err != nil {
		t.Fatalf("Preview: %v", err)
	}
	if n := utf8.RuneCountInString(card.Title); n != 150 || !strings.HasSuffix(card.Title, "…") {
		t.Errorf("title has %d characters, want 150 ending in an ellipsis", n)
	}
	if card.Facts == nil {
		t.Error("facts is nil; a card's facts should marshal as []")
	}

	card, err = titleOnly.Preview(context.Background(), call(`{}`))
	if err != nil || card.Title != "create_ticket" {
		t.Errorf("empty title rendered as %q, %v; want the tool name", card.Title, err)
	}

	_, err = tool.Preview(context.Background(), call(`{"title":"flat"}`))
	toolError(t, err, false)
}
