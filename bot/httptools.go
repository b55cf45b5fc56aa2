package bot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"brain/bot/config"
	"brain/tools"
	ghtools "brain/tools/github"
	"brain/tools/httptool"
	"brain/tools/sandbox"
	"brain/tools/web"
)

// builtinTools returns the built-in tools the config turns on (web_search,
// web_fetch, sandbox_exec, the github_* family) and what must be closed at
// shutdown. Built-ins stay off until their block is present. With
// sandboxes false (brain config check), sandbox_exec is only named: no
// sandbox is prepared. binds are the sandbox's read-only mounts (skills);
// ghUsers gives people's GitHub user tokens (tools.github.acts_as).
func builtinTools(cfg *config.Config, sandboxes bool, binds func(agent string) []sandbox.Bind, ghUsers ghtools.UserTokens) ([]tools.Definition, []io.Closer, error) {
	var out []tools.Definition
	var closers []io.Closer
	var errs []error
	if ws := cfg.Tools.WebSearch; ws != nil {
		def, err := web.Search(web.SearchConfig{
			Provider: ws.Provider, APIKey: ws.APIKey, Endpoint: ws.Endpoint,
			MaxResults: ws.MaxResults, Timeout: time.Duration(ws.TimeoutMS) * time.Millisecond,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("tools.web_search: %w", err))
			def = tools.Definition{Name: "web_search"} // named, for the checks of agents' tools
		}
		out = append(out, def)
	}
	if wf := cfg.Tools.WebFetch; wf != nil {
		def, err := web.Fetch(web.FetchConfig{
			MaxChars: wf.MaxChars, MaxBody: wf.MaxBody, AllowPrivate: wf.AllowPrivate,
			Timeout: time.Duration(wf.TimeoutMS) * time.Millisecond,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("tools.web_fetch: %w", err))
			def = tools.Definition{Name: "web_fetch"}
		}
		out = append(out, def)
	}
	if sc := cfg.Tools.SandboxExec; sc != nil && !sandboxes {
		out = append(out, tools.Definition{Name: sandbox.ToolName})
	} else if sc != nil {
		sbc, err := sandboxConfig(cfg)
		if err != nil {
			return nil, closers, errors.Join(append(errs, fmt.Errorf("tools.sandbox_exec: %w", err))...)
		}
		sbc.Binds = binds
		sb, err := sandbox.New(sbc)
		if err != nil {
			return nil, closers, errors.Join(append(errs, fmt.Errorf("tools.sandbox_exec: %w", err))...)
		}
		out = append(out, sb.Tool())
		closers = append(closers, sb)
	}
	if cfg.Tools.GitHub != nil {
		defs, err := githubTools(cfg, ghUsers)
		if err != nil {
			errs = append(errs, err)
		}
		out = append(out, defs...)
	}
	return out, closers, errors.Join(errs...)
}

// httpTools turns tools.http config entries into tool definitions, in
// their order. Header values (secrets via ${ENV}) and OAuth tokens stay
// inside the tool: never in the model's view, events or logs. bearer
// gives an oauth tool its token source (nil: none, as brain config check
// runs nothing).
func httpTools(cfg *config.Config, bearer func(config.HTTPToolConfig) httptool.Bearer) ([]tools.Definition, error) {
	var out []tools.Definition
	for i, h := range cfg.Tools.HTTP {
		spec := httptool.Spec{
			Name:        h.Name,
			Description: h.Description,
			Input:       json.RawMessage(h.Input),
			Output:      json.RawMessage(h.Output),
			Method:      h.Method,
			URL:         h.URL,
			Headers:     h.Headers,
			Timeout:     time.Duration(h.TimeoutMS) * time.Millisecond,
		}
		if h.OAuth != nil && bearer != nil {
			spec.Bearer = bearer(h)
		}
		if a := h.Approval; a != nil {
			spec.Approval = &httptool.Approval{Title: a.Title}
			for _, f := range a.Facts {
				spec.Approval.Facts = append(spec.Approval.Facts, httptool.Fact{Label: f.Label, Value: f.Value})
			}
		}
		def, err := httptool.New(spec, nil)
		if err != nil {
			return nil, fmt.Errorf("tools.http[%d]: %w", i, err)
		}
		out = append(out, def)
	}
	return out, nil
}
