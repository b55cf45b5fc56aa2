package bot

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"brain/engine"
	"brain/engine/model/fakemodel"
)

func TestSandboxExec_ThroughATurn(t *testing.T) {
	if os.Getenv("BRAIN_SKIP_BWRAP") == "1" {
		t.Skip("BRAIN_SKIP_BWRAP=1")
	}
	t.Setenv("BRAIN_TEST_SECRET", "must-not-reach-the-sandbox")
	ta := newTestApp(t, "    tools: [sandbox_exec]\ntools:\n  sandbox_exec: {timeout_seconds: 30}\n", Options{})
	ta.fake.Push(
		fakemodel.ToolCalls(fakemodel.Call{Name: "sandbox_exec", Input: `{"command":"echo kept > note.txt; env"}`}),
		fakemodel.ToolCalls(fakemodel.Call{Name: "sandbox_exec", Input: `{"command":"cat /workspace/note.txt; exit 3"}`}),
		fakemodel.Text("done"),
	)
	s := ta.createSession()
	ta.sendMessage(s.ID, "use the shell")
	_, evs := ta.waitTurns(s.ID, 1)
	var outs []map[string]any
	for _, ev := range evs {
		if ev.Type != engine.EventToolResult {
			continue
		}
		d := payload[engine.ToolCallResult](t, ev)
		if d.Result.IsError {
			t.Fatalf("tool error: %s", ev.Data)
		}
		var out map[string]any
		_ = json.Unmarshal([]byte(d.Result.Content[0].Text), &out)
		outs = append(outs, out)
	}
	if len(outs) != 2 {
		t.Fatalf("results %v", outs)
	}
	if strings.Contains(outs[0]["stdout"].(string), "must-not-reach") {
		t.Fatal("brain's environment reached the sandbox")
	}
	if outs[1]["stdout"] != "kept\n" || outs[1]["exit_code"] != float64(3) {
		t.Fatalf("second command %v", outs[1])
	}
}
