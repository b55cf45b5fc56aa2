package plan

import (
	"context"
	"encoding/json"
	"testing"

	"brain/tools"
)

func TestPlan_ValidatesAndNormalises(t *testing.T) {
	set, err := tools.NewSet(Definition())
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := set.Get(Name)
	good := `{"steps":[{"content":"Read  the\nissue","status":"completed"},{"content":"Fix it","status":"inProgress"}]}`
	if err := tool.ValidateInput(json.RawMessage(good)); err != nil {
		t.Fatalf("valid plan refused: %v", err)
	}
	for _, bad := range []string{`{"steps":[]}`, `{"steps":[{"content":"x","status":"done"}]}`, `{"steps":[{"content":"","status":"pending"}]}`, `{}`} {
		if tool.ValidateInput(json.RawMessage(bad)) == nil {
			t.Errorf("invalid plan %s accepted", bad)
		}
	}
	out, err := tool.Run(context.Background(), tools.Call{Input: json.RawMessage(good)})
	if err != nil || string(out) != `{"steps":[{"content":"Read the issue","status":"completed"},{"content":"Fix it","status":"inProgress"}]}` {
		t.Fatalf("Run = %s, %v", out, err)
	}
}
