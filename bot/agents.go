package bot

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/engine/model/anthropic"
	"brain/engine/model/fakemodel"
	"brain/engine/model/openai"
	"brain/tools"
)

// NewID returns prefix_ followed by 12 hex digits of milliseconds and 16
// random hex digits: unique, and sortable by creation time.
func NewID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s_%012x%s", prefix, time.Now().UnixMilli()&0xffffffffffff, hex.EncodeToString(b[:]))
}

// buildModels builds one engine.Model per configured model. A model with
// provider "fake" gets its own scripted fake model server (a test double
// that echoes), for demos and tests without a provider.
func (a *App) buildModels() (map[string]engine.Model, error) {
	out := map[string]engine.Model{}
	for name, mc := range a.cfg.Models {
		hint := fmt.Sprintf("models.%s.api_key", name)
		switch mc.Provider {
		case "anthropic", "fake":
			base, key, modelName := mc.BaseURL, mc.APIKey, mc.Model
			if mc.Provider == "fake" {
				f, err := a.startFake(name, mc)
				if err != nil {
					return nil, err
				}
				base, key = f.URL(), "fake-model-test-double"
			} else if key == "" {
				hint += " (e.g. export ANTHROPIC_API_KEY), or point the model at an OpenAI-compatible base_url"
				a.log.Warn("no API key for models."+name+"; turns will fail until one is set", tools.LogSet, hint)
			}
			m, err := anthropic.New(anthropic.Config{
				BaseURL: base, APIKey: key, KeyHint: hint, Model: modelName,
				MaxTokens: mc.MaxTokens, MaxRetries: mc.Retries(), Timeout: mc.Timeout.Std(),
			})
			if err != nil {
				return nil, fmt.Errorf("models.%s: %w", name, err)
			}
			out[name] = m
		case "openai":
			key := mc.APIKey
			if key == "" && mc.BaseURL != "" {
				// Self-hosted servers (Ollama, vLLM, llama.cpp) take no key.
				key = "no-key"
			}
			m, err := openai.New(openai.Config{
				BaseURL: mc.BaseURL, APIKey: key, KeyHint: hint, Model: mc.Model,
				MaxTokens: mc.MaxTokens, MaxRetries: mc.Retries(), Timeout: mc.Timeout.Std(),
			})
			if err != nil {
				return nil, fmt.Errorf("models.%s: %w", name, err)
			}
			out[name] = m
		default:
			return nil, fmt.Errorf("models.%s.provider: unknown provider %q", name, mc.Provider)
		}
	}
	return out, nil
}

// startFake starts the fake model server (test double) of models.name:
// on mc.Listen when set (the demo's http tools name its URL), following
// the demo script when mc.Script is demo.
func (a *App) startFake(name string, mc config.ModelConfig) (*fakemodel.Server, error) {
	opts := []fakemodel.Option{fakemodel.WithLogger(a.log)}
	does := "it echoes input"
	if mc.Script == "demo" {
		opts = append(opts, fakemodel.WithDemo())
		does = "it follows the demo script"
	}
	var f *fakemodel.Server
	if mc.Listen == "" {
		f = fakemodel.New(opts...)
	} else {
		var err error
		if f, err = fakemodel.Listen(mc.Listen, opts...); err != nil {
			return nil, fmt.Errorf("models.%s.listen: %w", name, err)
		}
	}
	a.fakes = append(a.fakes, f)
	a.log.Warn("models."+name+" uses the fake model server (test double): "+does+", it is not a language model", tools.LogURL, f.URL())
	return f, nil
}

// buildAgents resolves each agent's model and tools by name. Entries naming
// an MCP server or one of its tools are resolved at each turn, since MCP
// servers change their tools at runtime.
func buildAgents(cfg *config.Config, models map[string]engine.Model, defs []tools.Definition, mcps *mcpCatalog) ([]*engine.Agent, error) {
	catalog, err := tools.NewSet(defs...)
	if err != nil {
		return nil, err
	}
	resolve := func(where string, names []string) ([]*tools.Tool, error) {
		var out []*tools.Tool
		for _, n := range names {
			if n == engine.AskTool || mcps.owns(n) {
				continue // built into the engine, or dynamic
			}
			t, ok := catalog.Get(n)
			if !ok {
				return nil, fmt.Errorf("%s: unknown tool %q (known: %v)", where, n, catalog.Names())
			}
			out = append(out, t)
		}
		return out, nil
	}
	var agents []*engine.Agent
	for i, ac := range cfg.Agents {
		where := fmt.Sprintf("agents[%d]", i)
		model, ok := models[ac.Model]
		if !ok {
			return nil, fmt.Errorf("%s.model: %q is not a key of models", where, ac.Model)
		}
		a := &engine.Agent{
			Name:              ac.Name,
			Model:             model,
			Instructions:      ac.Instructions,
			MaxToolIterations: ac.MaxToolIterations,
			InputMode:         ac.InputMode,
			Ask:               slices.Contains(ac.Tools, engine.AskTool),
			Approvers:         ac.Approvers,
			ContextWindow:     cfg.Models[ac.Model].ContextWindow,
			MaxTokens:         cfg.Models[ac.Model].MaxTokens,
		}
		var dynamic []string
		for _, n := range ac.Tools {
			if mcps.owns(n) {
				dynamic = append(dynamic, n)
			}
		}
		if len(dynamic) > 0 {
			a.Dynamic = mcps.selector(dynamic)
		}
		if a.Tools, err = resolve(where+".tools", ac.Tools); err != nil {
			return nil, err
		}
		for j := range ac.When {
			w := &ac.When[j] // its pattern was compiled by Validate
			ts, err := resolve(fmt.Sprintf("%s.when[%d].tools", where, j), w.Tools)
			if err != nil {
				return nil, err
			}
			a.When = append(a.When, engine.Conditional{Match: w.Matches, Tools: ts, Ask: slices.Contains(w.Tools, engine.AskTool)})
		}
		if ac.ResultTool != "" {
			rt, err := resultTool(catalog, ac.ResultTool)
			if err != nil {
				return nil, fmt.Errorf("%s.result_tool: %w", where, err)
			}
			a.Tools = slices.DeleteFunc(a.Tools, func(t *tools.Tool) bool { return t.Name == rt.Name })
			a.Tools = append(a.Tools, rt)
		}
		agents = append(agents, a)
	}
	return agents, nil
}

// resultTool returns the named tool marked as the agent's result tool: its
// output is committed to the session. It must declare an output schema and
// run at once (no approval).
func resultTool(catalog *tools.Set, name string) (*tools.Tool, error) {
	t, ok := catalog.Get(name)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q (known: %v)", name, catalog.Names())
	}
	def := t.Definition
	def.Result = true
	rt, err := tools.Compile(def)
	if err != nil {
		return nil, err
	}
	return rt, nil
}

// agentPrices is the price of each agent's model, by agent name; agents
// whose model has none are left out.
func agentPrices(cfg *config.Config) map[string]*config.PriceConfig {
	out := map[string]*config.PriceConfig{}
	for _, ac := range cfg.Agents {
		if p := cfg.Models[ac.Model].Price; p != nil {
			out[ac.Name] = p
		}
	}
	return out
}
