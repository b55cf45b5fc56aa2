package mcp

import (
	"encoding/json"
	"testing"
)

// Annotated arguments are mirrored with SEP-2243's encoding; null, absent
// and unannotated ones are not.
func TestMirror(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"on":{"type":"boolean","x-mcp-header":"On"},
		"name":{"type":"string","x-mcp-header":"Name"},
		"pad":{"type":"string","x-mcp-header":"Pad"},
		"gone":{"type":"string","x-mcp-header":"Gone"},
		"nil":{"type":"string","x-mcp-header":"Nil"},
		"query":{"type":"string"}}}`)
	h := mirror(paramHeaders(schema), json.RawMessage(`{"region":"us-west1","n":42,"on":false,"name":"Hello, 世界","pad":" x ","nil":null,"query":"SELECT 1"}`))
	want := map[string]string{
		"Mcp-Param-Region": "us-west1",
		"Mcp-Param-N":      "42",
		"Mcp-Param-On":     "false",
		"Mcp-Param-Name":   "=?base64?SGVsbG8sIOS4lueVjA==?=",
		"Mcp-Param-Pad":    "=?base64?IHgg?=",
	}
	if len(h) != len(want) {
		t.Fatalf("headers %v, want %v", h, want)
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}
