package githubhook

import (
	"reflect"
	"testing"
)

func TestParseEvent_EveryExampleOfTheHandledEvents(t *testing.T) {
	cases := []struct {
		event, action, kind string
	}{
		{"issue_comment", "created", KindComment},
		{"pull_request_review_comment", "created", KindComment},
		{"issues", "opened", KindOpened},
		{"pull_request", "opened", KindOpened},
	}
	for _, c := range cases {
		for i, ex := range examples(t, c.event, c.action) {
			it, ignored, err := ParseEvent(ex.Event, ex.Body)
			if err != nil || ignored != "" {
				if ignored == IgnoredBot {
					continue
				}
				t.Fatalf("%s.%s #%d: ignored %q err %v", c.event, c.action, i, ignored, err)
			}
			if it.Kind != c.kind || it.Owner == "" || it.Repo == "" || it.Number <= 0 || it.Author == "" || it.CommentID <= 0 || it.EventKey == "" {
				t.Fatalf("%s.%s #%d: %+v", c.event, c.action, i, it)
			}
			if c.event != "issues" && c.event != "issue_comment" && !it.PullRequest {
				t.Fatalf("%s #%d: not marked a pull request", c.event, i)
			}
			if c.event == "pull_request" && (it.BaseRef == "" || it.HeadRef == "") {
				t.Fatalf("pull_request #%d: no base/head: %+v", i, it)
			}
		}
	}
}

func TestParseEvent_FieldsOfAnIssueComment(t *testing.T) {
	body := exampleWith(t, "issue_comment", "created", func(m map[string]any) {
		m["comment"].(map[string]any)["body"] = "@brain please look"
		m["comment"].(map[string]any)["id"] = 4242
		m["issue"].(map[string]any)["number"] = 7
		m["issue"].(map[string]any)["title"] = "Broken build"
		m["installation"] = map[string]any{"id": 99}
	})
	it, ignored, err := ParseEvent("issue_comment", body)
	if err != nil || ignored != "" {
		t.Fatal(ignored, err)
	}
	want := Item{Kind: KindComment, EventKey: "comment:4242", Number: 7, Title: "Broken build", CommentID: 4242,
		CommentSource: SourceIssueComment, Text: "@brain please look", Installation: 99}
	got := it
	got.Owner, got.Repo, got.Body, got.URL, got.Author = "", "", "", "", ""
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if it.Repository() != "Codertocat/Hello-World" || it.Author != "Codertocat" {
		t.Fatalf("repository %q author %q", it.Repository(), it.Author)
	}
}

func TestParseEvent_IgnoresWhatItShould(t *testing.T) {
	for _, c := range []struct{ event, action, why string }{
		{"issue_comment", "edited", IgnoredAction},
		{"issue_comment", "deleted", IgnoredAction},
		{"issues", "labeled", IgnoredAction},
		{"pull_request", "closed", IgnoredAction},
		{"push", "", IgnoredEvent},
	} {
		body := []byte(`{}`)
		if c.action != "" {
			body = examples(t, c.event, c.action)[0].Body
		}
		_, ignored, err := ParseEvent(c.event, body)
		if err != nil || ignored != c.why {
			t.Fatalf("%s.%s: ignored %q err %v", c.event, c.action, ignored, err)
		}
	}
	bot := exampleWith(t, "issue_comment", "created", func(m map[string]any) {
		m["comment"].(map[string]any)["user"] = map[string]any{"login": "ci[bot]", "type": "Bot"}
		m["sender"] = map[string]any{"login": "ci[bot]", "type": "Bot"}
	})
	if _, ignored, err := ParseEvent("issue_comment", bot); err != nil || ignored != IgnoredBot {
		t.Fatalf("bot comment: ignored %q err %v", ignored, err)
	}
}

func TestParseEvent_BrokenHandledEventsAreErrors(t *testing.T) {
	for _, body := range []string{`not json`, `{"action":"created"}`, `{"action":"created","repository":{"name":"r","owner":{"login":"o"}}}`,
		`{"action":"created","repository":{"name":"r/x","owner":{"login":"o"}},"comment":{"id":1},"issue":{"number":1}}`} {
		if _, _, err := ParseEvent("issue_comment", []byte(body)); err == nil {
			t.Fatalf("%s: no error", body)
		}
	}
}

func TestMentions(t *testing.T) {
	for text, want := range map[string]bool{
		"@brain do it": true, "hi @Brain.": true, "(@brain)": true, "@brainy": false, "x@brain": false,
		"email me@brain": false, "no mention": false, "@brain-bot": false,
	} {
		if got := Mentions(text, "brain"); got != want {
			t.Errorf("Mentions(%q) = %v", text, got)
		}
	}
	if !Mentions("ask @brain-app[bot] now", "brain-app[bot]") || Mentions("x", "") {
		t.Fatal("bot login")
	}
}
