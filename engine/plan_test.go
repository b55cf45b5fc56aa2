package engine_test

import (
	"reflect"
	"testing"

	"brain/engine"
)

func TestPlanUpdated_RoundTrip(t *testing.T) {
	p := engine.PlanUpdated{CallID: "call_1", Steps: []engine.PlanStep{
		{Content: "Read the issue", Status: engine.PlanCompleted},
		{Content: "Fix it", Status: engine.PlanInProgress},
	}}
	ev, err := engine.NewEvent(p)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != engine.EventPlanUpdated || string(ev.Data) != `{"call_id":"call_1","steps":[{"content":"Read the issue","status":"completed"},{"content":"Fix it","status":"inProgress"}]}` {
		t.Fatalf("event %s %s", ev.Type, ev.Data)
	}
	got, err := ev.Decode()
	if err != nil || !reflect.DeepEqual(got, p) {
		t.Fatalf("Decode = %#v, %v", got, err)
	}
}
