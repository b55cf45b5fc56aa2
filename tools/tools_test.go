package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"brain/tools"
)

func run(context.Context, tools.Call) (json.RawMessage, error) { return nil, nil }
func preview(context.Context, tools.Call) (tools.Card, error)  { return tools.Card{}, nil }
func apply(context.Context, tools.Call, tools.Decision) (json.RawMessage, error) {
	return nil, nil
}

func TestDefinition_Check(t *testing.T) {
	out := json.RawMessage(`{"type":"object"}`)
	for _, c := range []struct {
		name string
		def  tools.Definition
		want string
	}{
		{"ok run", tools.Definition{Name: "a", Description: "d", Run: run}, ""},
		{"ok approval", tools.Definition{Name: "a-b_1", Description: "d", Preview: preview, Apply: apply}, ""},
		{"ok result", tools.Definition{Name: "r", Description: "d", Run: run, Result: true, Output: out}, ""},
		{"bad name", tools.Definition{Name: "a b", Description: "d", Run: run}, `tool "a b": name must match`},
		{"empty name", tools.Definition{Description: "d", Run: run}, `tool "": name`},
		{"no description", tools.Definition{Name: "a", Run: run}, `tool "a": description is empty`},
		{"run and pair", tools.Definition{Name: "a", Description: "d", Run: run, Preview: preview, Apply: apply}, "has run and preview/apply"},
		{"run and preview", tools.Definition{Name: "a", Description: "d", Run: run, Preview: preview}, "has run and preview/apply"},
		{"only preview", tools.Definition{Name: "a", Description: "d", Preview: preview}, "only one of preview and apply"},
		{"only apply", tools.Definition{Name: "a", Description: "d", Apply: apply}, "only one of preview and apply"},
		{"nothing", tools.Definition{Name: "a", Description: "d"}, "neither run nor preview/apply"},
		{"result without output", tools.Definition{Name: "r", Description: "d", Run: run, Result: true}, "must declare an output schema"},
		{"result with approval", tools.Definition{Name: "r", Description: "d", Preview: preview, Apply: apply, Result: true, Output: out}, "must use run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.def.Check()
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

func TestSet_RejectsDuplicatesReservedAndBadSchemas(t *testing.T) {
	a := tools.Definition{Name: "a", Description: "d", Run: run}
	if _, err := tools.NewSet(a, a); err == nil || !strings.Contains(err.Error(), "defined twice") {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := tools.NewSet(tools.Definition{Name: "ask", Description: "d", Run: run}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("reserved: %v", err)
	}
	bad := tools.Definition{Name: "b", Description: "d", Run: run, Input: json.RawMessage(`{"type":"nope"}`)}
	if _, err := tools.NewSet(bad); err == nil || !strings.Contains(err.Error(), `tool "b": input schema`) {
		t.Fatalf("bad schema: %v", err)
	}
	remote := tools.Definition{Name: "c", Description: "d", Run: run, Input: json.RawMessage(`{"$ref":"https://example.com/schema.json"}`)}
	if _, err := tools.NewSet(remote); err == nil {
		t.Fatal("a schema was allowed to load a URL")
	}
}

func TestTool_Validate(t *testing.T) {
	tool, err := tools.Compile(tools.Definition{
		Name: "t", Description: "d", Run: run,
		Input:  json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"additionalProperties":false}`),
		Output: json.RawMessage(`{"type":"object","required":["ok"]}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		want string
	}{
		{`{"n":2}`, ""},
		{`{"n":0}`, "at /n"},
		{`{}`, "missing property"},
		{`{"n":1,"x":1}`, "additional"},
		{`{"n":"1"}`, "at /n"},
		{`[1]`, "does not match"},
		{`{"n":`, "not valid JSON"},
	} {
		err := tool.ValidateInput(json.RawMessage(c.in))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
	if err := tool.ValidateOutput(json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := tool.ValidateOutput(json.RawMessage(`{}`)); err == nil {
		t.Fatal("invalid output accepted")
	}
	// Without an input schema, any object is fine and nothing else is.
	free, _ := tools.Compile(tools.Definition{Name: "f", Description: "d", Run: run})
	if free.ValidateInput(json.RawMessage(`{"x":1}`)) != nil || free.ValidateInput(json.RawMessage(`3`)) == nil {
		t.Fatal("schemaless validation")
	}
}

func TestCall_IdempotencyKeyAndProgress(t *testing.T) {
	var got []string
	c := tools.Call{SessionID: "ses_1", ToolCallID: "call_9", Progress: func(_ context.Context, d json.RawMessage) error {
		got = append(got, string(d))
		return nil
	}}
	if c.IdempotencyKey() != "ses_1:call_9" {
		t.Fatal(c.IdempotencyKey())
	}
	if err := c.ReportProgress(context.Background(), map[string]string{"phase": "downloading"}); err != nil || got[0] != `{"phase":"downloading"}` {
		t.Fatal(err, got)
	}
	if err := (tools.Call{}).ReportProgress(context.Background(), 1); err != nil {
		t.Fatal("progress without a sink must be a no-op")
	}
}
