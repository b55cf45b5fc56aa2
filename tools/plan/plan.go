// Package plan is the plan tool: the model sets or replaces a short
// checklist of what it is doing, each step pending, inProgress, completed
// or canceled. The engine records each successful call as plan.updated
// (engine.PlanTool names it), and channels show it: in Linear, the agent
// session's plan.
//
// It imports only tools.
package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"brain/tools"
)

// Name is the tool's name (engine.PlanTool).
const Name = "plan"

// MaxSteps bounds a plan: a checklist, not a project.
const MaxSteps = 20

const inputSchema = `{
  "type": "object",
  "properties": {
    "steps": {
      "type": "array",
      "minItems": 1,
      "maxItems": 20,
      "items": {
        "type": "object",
        "properties": {
          "content": {"type": "string", "minLength": 1, "maxLength": 200, "description": "What the step does, in a few words."},
          "status": {"type": "string", "enum": ["pending", "inProgress", "completed", "canceled"]}
        },
        "required": ["content", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["steps"],
  "additionalProperties": false
}`

// Step is one step of the plan.
type Step struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// Definition is the plan tool.
func Definition() tools.Definition {
	return tools.Definition{
		Name: Name,
		Description: "Set or update your plan: a short checklist of the steps of this task, each pending, inProgress, " +
			"completed or canceled. Send the whole list each time (it replaces the previous one); keep one step inProgress " +
			"while you work on it and mark steps completed as you finish them. People following the session see it.",
		Input: json.RawMessage(inputSchema),
		Run:   run,
	}
}

func run(ctx context.Context, call tools.Call) (json.RawMessage, error) {
	var in struct {
		Steps []Step `json:"steps"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if len(in.Steps) == 0 || len(in.Steps) > MaxSteps {
		return nil, fmt.Errorf("plan: give 1 to %d steps", MaxSteps)
	}
	for i := range in.Steps {
		in.Steps[i].Content = strings.Join(strings.Fields(in.Steps[i].Content), " ")
	}
	return json.Marshal(map[string]any{"steps": in.Steps})
}
