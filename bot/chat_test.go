package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/tools"
)

func TestChat_ConversationInTerminal(t *testing.T) {
	fake := fakemodel.New()
	defer fake.Close()
	fake.Push(fakemodel.Text("Hi! How can I help?"), fakemodel.Fail(500, "down"), fakemodel.Text("Back again."))
	dir := t.TempDir()
	cfg, err := config.Load(writeConfig(t, dir, fake.URL(), ""), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	in := strings.NewReader("hello\nbreak please\nagain\n/resume\nagain\n/quit\n")
	var out bytes.Buffer
	if err := Chat(context.Background(), cfg, Options{Stderr: &bytes.Buffer{}}, "", "ann", in, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		`brain chat with agent "default"`,
		"Hi! How can I help?",
		"! provider_unavailable",
		"type /resume",
		"resumed",
		"running 1 unanswered message(s) again", // break please, retried
		"Back again.",
		"echo: again",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// The conversation is a console session in the database.
	ins, err := OpenInspector(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	list, err := ins.Sessions(context.Background(), engine.SessionFilter{})
	if err != nil || len(list) != 1 || list[0].Origin != engine.OriginConsole || list[0].StartedBy != "ann" {
		t.Fatalf("sessions: %v %+v", err, list)
	}
}

func TestLogger_RedactsSecrets(t *testing.T) {
	cfg := &config.Config{APIKeys: []config.APIKey{{Key: "brain-api-key-123456"}}}
	cfg.Models = map[string]config.ModelConfig{"default": {APIKey: "sk-ant-very-secret"}}
	var buf bytes.Buffer
	log := NewLogger(cfg, &buf)
	log.Info("calling with sk-ant-very-secret", "err", errString("401 for key sk-ant-very-secret"), "key", "brain-api-key-123456")
	log.With("token", "sk-ant-very-secret").Warn("x")
	if strings.Contains(buf.String(), "very-secret") || strings.Contains(buf.String(), "123456") {
		t.Fatalf("secret in logs:\n%s", buf.String())
	}
	if strings.Count(buf.String(), "[REDACTED]") != 4 {
		t.Fatalf("redactions:\n%s", buf.String())
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestChat_QuestionsAndApprovals(t *testing.T) {
	fake := fakemodel.New()
	defer fake.Close()
	fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "ask", Input: `{"text":"Which environment?","options":[{"label":"Staging","value":"stg"},{"label":"Production","value":"prod"}]}`}),
		fakemodel.ToolCalls(fakemodel.Call{Name: "deploy", Input: `{"env":"prod"}`}),
		fakemodel.Text("Proposed the deploy."),
	)
	var applied []string
	deploy := tools.Definition{
		Name: "deploy", Description: "Deploy",
		Input: json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`),
		Preview: func(ctx context.Context, c tools.Call) (tools.Card, error) {
			return tools.Card{Title: "Deploy to " + string(c.Input), Facts: []tools.Fact{{Label: "Env", Value: "prod"}}}, nil
		},
		Apply: func(ctx context.Context, c tools.Call, d tools.Decision) (json.RawMessage, error) {
			applied = append(applied, d.ID)
			return json.RawMessage(`{"deployed":"prod"}`), nil
		},
	}
	dir := t.TempDir()
	cfg, err := config.Load(writeConfig(t, dir, fake.URL(), ""), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Agents[0].Tools = []string{"ask", "deploy"}
	in := strings.NewReader("deploy please\n2\ny\n/quit\n")
	var out bytes.Buffer
	if err := Chat(context.Background(), cfg, Options{Stderr: &bytes.Buffer{}, Tools: []tools.Definition{deploy}}, "", "ann", in, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"? Which environment?", "1) Staging", "2) Production", "[approval apr_", "Env: prod", "? [y/n]", "approved by ann", `applied: {"deployed":"prod"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if len(applied) != 1 {
		t.Fatalf("applied %d times", len(applied))
	}
	if req := string(fake.Requests()[1].Raw); !strings.Contains(req, `option value \"prod\"`) {
		t.Fatalf("the numbered answer did not reach the model as prod: %s", req)
	}
}
