package bot

import (
	"slices"

	"brain/tools"
	"brain/tools/plan"
)

// withPlanTool offers the built-in plan tool to agents that name it,
// unless the config declares a tool of that name itself.
func withPlanTool(defs []tools.Definition) []tools.Definition {
	if slices.ContainsFunc(defs, func(d tools.Definition) bool { return d.Name == plan.Name }) {
		return defs
	}
	return append(defs, plan.Definition())
}
