package engine

import (
	"fmt"

	"brain/tools"
)

// Input modes: what input does to a running turn.
const (
	ModeQueue     = "queue"
	ModeInterrupt = "interrupt"
)

// Agent is a model, instructions and the tools it may use.
type Agent struct {
	Name         string
	Model        Model
	Instructions string
	// Tools are always offered.
	Tools []*tools.Tool
	// When adds tools for turns whose input matches.
	When []Conditional
	// Dynamic, when set, is asked at each turn's start for more tools: a
	// catalog that changes at runtime (MCP servers).
	Dynamic func() []*tools.Tool
	// Extend, when set, is asked at each turn's start with the turn's
	// input for text added to the instructions and tools added to the
	// turn (the agent's skills: their listing and the skill tool). The
	// text should change only when what it offers changes, so the prompt
	// prefix stays cacheable.
	Extend func(input string) (instructions string, tools []*tools.Tool)
	// MaxToolIterations caps tool rounds per turn; zero uses the engine's.
	MaxToolIterations int
	// InputMode is the default for input that arrives while a turn runs:
	// ModeQueue (default) or ModeInterrupt.
	InputMode string
	// Ask offers the built-in ask tool to every turn (Conditional.Ask
	// offers it to some).
	Ask bool
	// Approvers may decide this agent's approvals; empty means the person
	// who started the session.
	Approvers []string
	// ContextWindow is the model's context window in tokens; zero means
	// unknown, and the engine then never compacts on its own (a provider's
	// context error still compacts). MaxTokens is the part of the window
	// kept for the answer (the model's max_tokens; zero means 4096).
	ContextWindow int
	MaxTokens     int
}

// Conditional offers Tools, and the ask tool when Ask is set, only to
// turns whose input satisfies Match.
type Conditional struct {
	Match func(input string) bool
	Tools []*tools.Tool
	Ask   bool
}

func (a *Agent) check() error {
	if a.Name == "" {
		return fmt.Errorf("agent: name is empty")
	}
	if a.Model == nil {
		return fmt.Errorf("agent %q: no model", a.Name)
	}
	switch a.InputMode {
	case "", ModeQueue, ModeInterrupt:
	default:
		return fmt.Errorf("agent %q: input mode %q is not queue or interrupt", a.Name, a.InputMode)
	}
	results := 0
	seen := map[string]bool{}
	all := append([]*tools.Tool(nil), a.Tools...)
	for _, c := range a.When {
		if c.Match == nil {
			return fmt.Errorf("agent %q: conditional tools without a match function", a.Name)
		}
		all = append(all, c.Tools...)
	}
	for _, t := range all {
		if seen[t.Name] {
			continue // a tool may be both conditional and listed twice
		}
		seen[t.Name] = true
		if t.Result {
			results++
		}
	}
	if results > 1 {
		return fmt.Errorf("agent %q: has %d result tools; an agent has at most one", a.Name, results)
	}
	return nil
}

// toolsFor returns the tools offered to a turn with the given input text,
// and whether the ask tool is one of them.
func (a *Agent) toolsFor(input string) (offered []*tools.Tool, ask bool) {
	out := append([]*tools.Tool(nil), a.Tools...)
	seen := map[string]bool{}
	for _, t := range out {
		seen[t.Name] = true
	}
	add := func(ts []*tools.Tool) {
		for _, t := range ts {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, t)
			}
		}
	}
	ask = a.Ask
	for _, c := range a.When {
		if c.Match(input) {
			add(c.Tools)
			ask = ask || c.Ask
		}
	}
	if a.Dynamic != nil {
		add(a.Dynamic())
	}
	return out, ask
}

// systemFor returns the system prompt of a turn with the given input and
// the tools Extend adds to it.
func (a *Agent) systemFor(input string) (string, []*tools.Tool) {
	if a.Extend == nil {
		return a.Instructions, nil
	}
	extra, ts := a.Extend(input)
	switch {
	case extra == "":
		return a.Instructions, ts
	case a.Instructions == "":
		return extra, ts
	}
	return a.Instructions + "\n\n" + extra, ts
}

// Agent returns the named agent.
func (e *Engine) Agent(name string) (*Agent, bool) {
	a, ok := e.agents[name]
	return a, ok
}
