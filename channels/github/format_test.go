package github

import (
	"encoding/json"
	"strings"
	"testing"

	"brain/engine"
	"brain/tools"
)

func TestThread_KeyAndParse(t *testing.T) {
	th := Thread{Owner: "acme", Repo: "web.app", Number: 12}
	if th.Key() != "github:acme/web.app#12" || th.String() != "acme/web.app#12" {
		t.Fatal(th.Key(), th.String())
	}
	for _, k := range []string{th.Key(), th.String()} {
		if got, err := Parse(k); err != nil || got != th {
			t.Fatalf("Parse(%q) = %+v, %v", k, got, err)
		}
	}
	for _, bad := range []string{"github:acme/web#0", "acme#1", "acme/x/y#1", "acme/web#x", "", "slack:C1/1.2"} {
		if _, err := Parse(bad); err == nil {
			t.Fatalf("Parse(%q) accepted", bad)
		}
	}
}

func TestParseCommand(t *testing.T) {
	cases := map[string]Command{
		"/approve":                  {Verb: "approve"},
		"/approve looks good":       {Verb: "approve", Text: "looks good"},
		"/approve #a1b2c3 ship it":  {Verb: "approve", ID: "#a1b2c3", Text: "ship it"},
		"/deny too risky\nsee logs": {Verb: "deny", Text: "too risky\nsee logs"},
		"/deny apr_123 no":          {Verb: "deny", ID: "apr_123", Text: "no"},
		"/STOP":                     {Verb: "stop"},
		"/retry #abcdef":            {Verb: "retry", ID: "#abcdef"},
	}
	for in, want := range cases {
		if got, ok := ParseCommand(in); !ok || got != want {
			t.Errorf("ParseCommand(%q) = %+v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"approve", "please /approve", "/approved", "/", "hello"} {
		if _, ok := ParseCommand(in); ok {
			t.Errorf("ParseCommand(%q) took it for a command", in)
		}
	}
	if !MatchID(ShortID("apr_0123456789"), "apr_0123456789") || MatchID("#000000", "apr_0123456789") {
		t.Fatal("short ids")
	}
}

func TestAnswerFor(t *testing.T) {
	q := engine.Question{ID: "q1", Options: []engine.Option{{Label: "Staging", Value: "stg"}, {Label: "Production", Value: "prod"}}}
	for in, want := range map[string]engine.Answer{
		"2":             {QuestionID: "q1", Value: "prod"},
		" 1. ":          {QuestionID: "q1", Value: "stg"},
		"production":    {QuestionID: "q1", Value: "prod"},
		"stg":           {QuestionID: "q1", Value: "stg"},
		"3":             {QuestionID: "q1", Text: "3"},
		"neither, wait": {QuestionID: "q1", Text: "neither, wait"},
	} {
		if got := AnswerFor(q, in); got != want {
			t.Errorf("AnswerFor(%q) = %+v", in, got)
		}
	}
}

func TestSplit(t *testing.T) {
	long := strings.Repeat("line of text\n", 12000) // 156,000 chars
	parts := Split(long)
	if len(parts) != 3 || strings.Join(parts, "") != long {
		t.Fatalf("%d parts", len(parts))
	}
	for _, p := range parts {
		if len([]rune(p)) > MaxComment || !strings.HasSuffix(p, "\n") {
			t.Fatalf("part of %d runes, ends %q", len([]rune(p)), p[len(p)-3:])
		}
	}
	if got := Split("short"); len(got) != 1 || got[0] != "short" {
		t.Fatal(got)
	}
}

func TestCardBody(t *testing.T) {
	a := engine.Approval{ID: "apr_0000abcdef", Tool: "github_create_issue", Status: engine.ApprovalPending,
		Input: json.RawMessage("{\"title\":\"x ``` y\"}"),
		Card:  tools.Card{Title: "Create an issue", Facts: []tools.Fact{{Label: "Repo", Value: "acme/web"}, {Label: "Title", Value: "a | b"}}}}
	body := CardBody(a, "https://brain.example", []string{"1 of 2 approvals"})
	for _, want := range []string{"Create an issue", "| Repo | acme/web |", `a \| b`, "<details>", "````json", "/approve #abcdef", "/deny #abcdef <reason>",
		"https://brain.example/approvals/apr_0000abcdef", "> 1 of 2 approvals"} {
		if !strings.Contains(body, want) {
			t.Errorf("card lacks %q:\n%s", want, body)
		}
	}
	a.Status = engine.ApprovalApplied
	if strings.Contains(CardBody(a, "", nil), "/approve") {
		t.Error("a decided card still offers /approve")
	}
}
