package engine

import (
	"encoding/json"
)

// PlanTool is the name of the plan tool: its successful calls are also
// recorded as plan.updated, the session's current checklist.
const PlanTool = "plan"

// EventPlanUpdated is plan.updated: the agent set or replaced its plan.
const EventPlanUpdated = "plan.updated"

// Plan step statuses, as Linear names them.
const (
	PlanPending    = "pending"
	PlanInProgress = "inProgress"
	PlanCompleted  = "completed"
	PlanCanceled   = "canceled"
)

// PlanUpdated is plan.updated: the whole plan after a plan call (a call
// replaces the plan, it does not patch it).
type PlanUpdated struct {
	CallID string     `json:"call_id"`
	Steps  []PlanStep `json:"steps"`
}

// PlanStep is one step of a plan.
type PlanStep struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

func (PlanUpdated) EventType() string { return EventPlanUpdated }
func (PlanUpdated) isPayload()        {}

// planOf reads a plan tool's output ({"steps": [...]}); nil when it is not
// one, so a malformed plan never fails the call.
func planOf(callID string, out string) *PlanUpdated {
	var p struct {
		Steps []PlanStep `json:"steps"`
	}
	if json.Unmarshal([]byte(out), &p) != nil || p.Steps == nil {
		return nil
	}
	return &PlanUpdated{CallID: callID, Steps: p.Steps}
}
