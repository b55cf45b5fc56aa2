package bot

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"brain/bot/config"
	"brain/engine"
	"brain/tools"
)

// CheckConfig checks what config.Load cannot check alone, without opening
// the database, binding a port, starting a sandbox or connecting anywhere:
// the tools declared in config compile, the built-ins configure, every
// tool an agent names exists, every skill is valid (git sources as last
// fetched) and every skill an agent names exists (config validation
// compiles the approval policies). It returns every problem at once.
func CheckConfig(cfg *config.Config, opts Options) error {
	var errs []error
	declared, err := httpTools(cfg, nil)
	errs = append(errs, err)
	builtins, _, err := builtinTools(cfg, false, nil, githubUsers{})
	errs = append(errs, err)
	errs = append(errs, checkAgentTools(cfg, withPlanTool(slices.Concat(declared, builtins, opts.Tools))))
	if len(cfg.Skills.Sources) > 0 {
		_, _, err = LoadSkills(cfg, true)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkAgentTools reports every tool an agent names that is not among
// defs, the built-in ask or an MCP server's (an entry "<id>" or
// "<id>__<tool>" of a configured server, whose tools are known only once
// connected): all of them at once, each with its key and line, then the
// valid names.
func checkAgentTools(cfg *config.Config, defs []tools.Definition) error {
	known := map[string]bool{engine.AskTool: true}
	for _, d := range defs {
		known[d.Name] = true
	}
	mcpIDs := map[string]bool{}
	for _, s := range cfg.MCPServers {
		mcpIDs[s.ID] = true
	}
	var errs []error
	check := func(key, name string) {
		id, _, _ := strings.Cut(name, "__")
		if known[name] || mcpIDs[id] {
			return
		}
		at := ""
		if line := cfg.Line(key); line > 0 {
			at = fmt.Sprintf(" (line %d)", line)
		}
		errs = append(errs, fmt.Errorf("%s%s: unknown tool %q", key, at, name))
	}
	for i, a := range cfg.Agents {
		for k, n := range a.Tools {
			check(fmt.Sprintf("agents[%d].tools[%d]", i, k), n)
		}
		for j, w := range a.When {
			for k, n := range w.Tools {
				check(fmt.Sprintf("agents[%d].when[%d].tools[%d]", i, j, k), n)
			}
		}
		if a.ResultTool != "" {
			check(fmt.Sprintf("agents[%d].result_tool", i), a.ResultTool)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	slices.Sort(names)
	valid := "valid tool names: " + strings.Join(names, ", ")
	if len(mcpIDs) > 0 {
		ids := make([]string, 0, len(mcpIDs))
		for id := range mcpIDs {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		valid += "; and MCP servers (all their tools, or <id>__<tool>): " + strings.Join(ids, ", ")
	}
	valid += " (a built-in is offered once its block is under tools:, e.g. tools: {web_fetch: {}})"
	return errors.Join(append(errs, errors.New(valid))...)
}
