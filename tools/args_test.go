package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestTool_CanonicalInput(t *testing.T) {
	tool, err := Compile(Definition{
		Name: "open_pr", Description: "d", FoldCase: []string{"$.repo", "$.target.host"},
		Input: json.RawMessage(`{"type":"object","properties":{"repo":{"type":"string"},"base":{"type":"string"},
			"target":{"type":"object","properties":{"host":{"type":"string"}}}}}`),
		Run: noRun,
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, want, err string
	}{
		{``, `{}`, ""},
		{` {"base":"main", "repo":"Acme/API"} `, `{"base":"main","repo":"acme/api"}`, ""},
		{`{"target":{"host":"API.Example.COM"},"note":"<b>&"}`, `{"target":{"host":"api.example.com"},"note":"<b>&"}`, ""},
		{`{"n":1.5,"m":-0,"big":1e300,"tiny":1e-400,"i":9007199254740992}`, `{"n":1.5,"m":-0,"big":1e300,"tiny":1e-400,"i":9007199254740992}`, ""},
		{`{"list":[{"repo":"KEEP"}],"repo":"X\u2028"}`, `{"list":[{"repo":"KEEP"}],"repo":"x\u2028"}`, ""},
		{`{"pad":1e400}`, "", "number 1e400 at $.pad is too large"},
		{`{"a":[0,{"b":-1E309}]}`, "", "at $.a[1].b is too large"},
		{`{"i":-9007199254740993}`, "", "beyond ±2^53"},
		{`{"base":"dev","base":"main"}`, "", `key "base" appears twice at $`},
		{`{"REPO":"acme/api"}`, "", `key "REPO" at $ is not "repo"`},
		{`{"target":{"Host":"x"}}`, "", `key "Host" at $.target is not "host"`},
		{`{"x":1,"X":2}`, "", `keys "x" and "X" at $ differ only in case`},
		{`{"ba\u017fe":"main"}`, "", `is not "base"`},
		{`{"repo":"a"} {"repo":"b"}`, "", "something follows it"},
		{`{"repo":`, "", "not valid JSON"},
		{strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70), "", "nested deeper than 64"},
	}
	for _, tt := range tests {
		got, err := tool.CanonicalInput(json.RawMessage(tt.in))
		switch {
		case tt.err == "" && (err != nil || string(got) != tt.want):
			t.Errorf("CanonicalInput(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("CanonicalInput(%s) = %s, %v; want an error with %q", tt.in, got, err, tt.err)
		}
	}
}

func TestDefinition_CheckFoldCase(t *testing.T) {
	d := Definition{Name: "t", Description: "d", FoldCase: []string{"repo"}, Run: noRun}
	if err := d.Check(); err == nil || !strings.Contains(err.Error(), `fold_case path "repo"`) {
		t.Fatalf("Check = %v; want the path refused", err)
	}
}

func noRun(context.Context, Call) (json.RawMessage, error) { return nil, nil }
