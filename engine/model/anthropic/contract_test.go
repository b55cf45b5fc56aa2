package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"brain/engine"
	"brain/engine/model/fakemodel"
	"brain/engine/model/modeltest"
)

// Anthropic publishes no machine-readable description of its Messages API,
// so the shapes brain relies on are written here from the documentation,
// one row each with its page beside it, closed (additionalProperties
// false) so a field the page does not define fails as a wrong type does.
var anthropicShapes = []struct {
	name, doc string
	// nodes picks the parts of a request body the row is about.
	nodes  func(body map[string]any) []any
	schema string
	// wrong is a node the schema must refuse: the row's canary.
	wrong string
}{
	{
		name: "request", doc: "https://docs.anthropic.com/en/api/messages",
		nodes: func(b map[string]any) []any { return []any{b} },
		schema: `{"type":"object","required":["model","max_tokens","messages"],"additionalProperties":false,"properties":{
			"model":{"type":"string","minLength":1},"max_tokens":{"type":"integer","minimum":1},
			"messages":{"type":"array","minItems":1},"system":{"type":"array"},"tools":{"type":"array"},
			"stream":{"type":"boolean"},"temperature":{"type":"number"},"metadata":{"type":"object"}}}`,
		wrong: `{"model":"m","max_tokens":0,"messages":[]}`,
	},
	{
		name: "message", doc: "https://docs.anthropic.com/en/api/messages#body-messages",
		nodes: func(b map[string]any) []any { return list(b["messages"]) },
		schema: `{"type":"object","required":["role","content"],"additionalProperties":false,"properties":{
			"role":{"enum":["user","assistant"]},"content":{"type":"array","minItems":1}}}`,
		wrong: `{"role":"system","content":[]}`,
	},
	{
		// Up to 4 breakpoints per request; ttl "5m" (the default) or "1h".
		name: "cache breakpoint", doc: "https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching",
		nodes: func(b map[string]any) []any { return find(b, func(m map[string]any) any { return m["cache_control"] }) },
		schema: `{"type":"object","required":["type"],"additionalProperties":false,"properties":{
			"type":{"const":"ephemeral"},"ttl":{"enum":["5m","1h"]}}}`,
		wrong: `{"type":"persistent"}`,
	},
	{
		name: "system text block", doc: "https://docs.anthropic.com/en/api/messages#body-system",
		nodes:  func(b map[string]any) []any { return list(b["system"]) },
		schema: `{"type":"object","required":["type","text"],"additionalProperties":false,"properties":{"type":{"const":"text"},"text":{"type":"string","minLength":1},"cache_control":{"type":"object"}}}`,
		wrong:  `{"type":"text","text":"sys","cache":{"type":"ephemeral"}}`,
	},
	{
		name: "tool definition", doc: "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#specifying-client-tools",
		nodes: func(b map[string]any) []any { return list(b["tools"]) },
		schema: `{"type":"object","required":["name","input_schema"],"additionalProperties":false,"properties":{
			"name":{"type":"string","pattern":"^[a-zA-Z0-9_-]{1,64}$"},"description":{"type":"string"},
			"input_schema":{"type":"object","required":["type"],"properties":{"type":{"const":"object"}}},"cache_control":{"type":"object"}}}`,
		wrong: `{"name":"weather forecast","input_schema":{"type":"object"}}`,
	},
	{
		name: "text block", doc: "https://docs.anthropic.com/en/api/messages#body-messages-content",
		nodes:  blocks("text"),
		schema: `{"type":"object","required":["type","text"],"additionalProperties":false,"properties":{"type":{"const":"text"},"text":{"type":"string"},"cache_control":{"type":"object"}}}`,
		wrong:  `{"type":"text","content":"hi"}`,
	},
	{
		name: "tool_use block", doc: "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#handling-tool-use-and-tool-result-content-blocks",
		nodes: blocks("tool_use"),
		schema: `{"type":"object","required":["type","id","name","input"],"additionalProperties":false,"properties":{
			"type":{"const":"tool_use"},"id":{"type":"string","minLength":1},"name":{"type":"string"},"input":{"type":"object"},"cache_control":{"type":"object"}}}`,
		wrong: `{"type":"tool_use","id":"c1","name":"t","input":"oops"}`,
	},
	{
		// content is a string or a list of text (or image) blocks.
		name: "tool_result block", doc: "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#handling-tool-use-and-tool-result-content-blocks",
		nodes: blocks("tool_result"),
		schema: `{"type":"object","required":["type","tool_use_id"],"additionalProperties":false,"properties":{
			"type":{"const":"tool_result"},"tool_use_id":{"type":"string","minLength":1},"is_error":{"type":"boolean"},"cache_control":{"type":"object"},
			"content":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"object","required":["type"],"properties":{"type":{"enum":["text","image"]}}}}]}}}`,
		wrong: `{"type":"tool_result","tool_use_id":"c1","content":[{"type":"thinking"}],"error":true}`,
	},
	{
		name: "image block", doc: "https://docs.anthropic.com/en/docs/build-with-claude/vision#base64-encoded-image-example",
		nodes: blocks("image"),
		schema: `{"type":"object","required":["type","source"],"additionalProperties":false,"properties":{"type":{"const":"image"},"cache_control":{"type":"object"},
			"source":{"type":"object","required":["type","media_type","data"],"additionalProperties":false,"properties":{
				"type":{"const":"base64"},"media_type":{"enum":["image/jpeg","image/png","image/gif","image/webp"]},"data":{"type":"string","contentEncoding":"base64","minLength":1}}}}}`,
		wrong: `{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"AA=="}}`,
	},
	{
		name: "document block", doc: "https://docs.anthropic.com/en/docs/build-with-claude/pdf-support#option-2-base64-encoded-pdf-document",
		nodes: blocks("document"),
		schema: `{"type":"object","required":["type","source"],"additionalProperties":false,"properties":{"type":{"const":"document"},
			"title":{"type":"string"},"context":{"type":"string"},"citations":{"type":"object"},"cache_control":{"type":"object"},
			"source":{"type":"object","required":["type","media_type","data"],"additionalProperties":false,"properties":{
				"type":{"const":"base64"},"media_type":{"const":"application/pdf"},"data":{"type":"string","minLength":1}}}}}`,
		wrong: `{"type":"document","source":{"type":"url","media_type":"application/pdf","data":"AA=="}}`,
	},
}

// TestAnthropic_RequestsMatchTheDocumentedShapes: what anthropic-sdk-go
// serialises for brain's requests (history with tool calls and results,
// failed results, tools, a system prompt, cache breakpoints, image,
// document and text attachments) matches each documented shape; each row
// has a body part to check (no row passes on nothing), at most 4 cache
// breakpoints are set, and each row refuses its wrong example.
func TestAnthropic_RequestsMatchTheDocumentedShapes(t *testing.T) {
	srv := modeltest.NewServer(t)
	m, err := New(Config{BaseURL: srv.URL(), APIKey: modeltest.TestKey, Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	history := modeltest.HistoryRequest()
	history.Tools = []engine.ToolSpec{{Name: "weather", Description: "Forecast", InputSchema: json.RawMessage(modeltest.ToolSchema)}}
	attach := modeltest.UserText("what is this?")
	attach.Messages[0].Attachments = []engine.Attachment{
		{Name: "shot.png", MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nfake")},
		{Name: "spec.pdf", MediaType: "application/pdf", Data: []byte("%PDF-1.4")},
		{Name: "notes.txt", Text: "file notes.txt:\nhello"},
	}
	for _, req := range []engine.ModelRequest{history, attach} {
		srv.Push(fakemodel.Text("ok"))
		if _, err := m.Generate(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	var bodies []map[string]any
	for _, r := range srv.Requests() {
		var b map[string]any
		if err := json.Unmarshal(r.Raw, &b); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
		if n := len(find(b, func(m map[string]any) any { return m["cache_control"] })); n > 4 {
			t.Errorf("%d cache breakpoints, the documented limit is 4: %s", n, r.Raw)
		}
	}
	for _, row := range anthropicShapes {
		t.Run(row.name, func(t *testing.T) {
			schema := compile(t, row.schema)
			var nodes []any
			for _, b := range bodies {
				nodes = append(nodes, row.nodes(b)...)
			}
			if len(nodes) == 0 {
				t.Fatalf("no %s in the requests sent", row.name)
			}
			for _, n := range nodes {
				if err := schema.Validate(n); err != nil {
					raw, _ := json.Marshal(n)
					t.Errorf("%s (%s): %v\n%s", row.name, row.doc, err, raw)
				}
			}
			wrong, err := jsonschema.UnmarshalJSON(strings.NewReader(row.wrong))
			if err != nil {
				t.Fatal(err)
			}
			if schema.Validate(wrong) == nil {
				t.Errorf("canary: %s accepted %s", row.name, row.wrong)
			}
		})
	}
}

func compile(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(schema)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://shape.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://shape.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// blocks picks the content blocks of type typ in the messages.
func blocks(typ string) func(map[string]any) []any {
	return func(b map[string]any) []any {
		var out []any
		for _, msg := range list(b["messages"]) {
			m, _ := msg.(map[string]any)
			for _, block := range list(m["content"]) {
				if bl, _ := block.(map[string]any); bl["type"] == typ {
					out = append(out, bl)
				}
			}
		}
		return out
	}
}

// find returns pick(m) of every object m in v (outside tool schemas),
// where it is set.
func find(v any, pick func(map[string]any) any) []any {
	var out []any
	switch v := v.(type) {
	case map[string]any:
		if p := pick(v); p != nil {
			out = append(out, p)
		}
		for k, e := range v {
			if k != "input_schema" && k != "input" {
				out = append(out, find(e, pick)...)
			}
		}
	case []any:
		for _, e := range v {
			out = append(out, find(e, pick)...)
		}
	}
	return out
}
