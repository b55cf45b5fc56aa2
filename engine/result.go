package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"brain/tools"
)

// MaxResultBytes caps a committed result's JSON.
const MaxResultBytes = 8 << 10

// errTurnEnded refuses a result from a turn that no longer runs.
var errTurnEnded = errors.New("the turn is no longer running; the result was not committed")

// resultOutcome turns a result tool's validated output into an outcome that
// commits it with the tool.result. The model is told only once the commit
// has happened (recordResult refuses it if the turn ended meanwhile).
func (e *Engine) resultOutcome(ctx context.Context, t *turn, call ToolCall, tool *tools.Tool, out toolOutcome) toolOutcome {
	if out.IsError {
		return out
	}
	if n := len(out.Text); n > MaxResultBytes {
		return failed("the result is %d bytes of JSON, over the %d-byte limit; the previous result stands", n, MaxResultBytes)
	}
	if ctx.Err() != nil {
		return failed("%v", errTurnEnded)
	}
	now := e.now()
	out.result = &ResultRecord{TurnID: t.id, CallID: call.ID, ReportedAt: now, Data: json.RawMessage(out.Text)}
	out.Text = fmt.Sprintf("Result committed to the session: %s", out.Text)
	return out
}

// LatestResult decodes the session's latest committed result (the data of
// its last result.committed event); nil when it has none.
func (s Session) LatestResult() (*ResultRecord, error) {
	if len(s.Result) == 0 || string(s.Result) == "null" {
		return nil, nil
	}
	p, err := decodeAs[ResultRecord](s.Result)
	if err != nil {
		return nil, fmt.Errorf("decode the result of session %s: %w", s.ID, err)
	}
	r := p.(ResultRecord)
	return &r, nil
}
