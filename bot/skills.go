package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"brain/bot/config"
	"brain/bot/web"
	"brain/engine"
	"brain/tools"
	"brain/tools/sandbox"
	"brain/tools/skills"
)

// skillMount is where sandbox_exec shows an agent's skill folders.
const skillMount = "/skills"

// skillSources converts skills.sources.
func skillSources(cfg *config.Config) []skills.Source {
	out := make([]skills.Source, 0, len(cfg.Skills.Sources))
	for _, s := range cfg.Skills.Sources {
		out = append(out, skills.Source{Name: s.Name, Dir: s.Dir, Git: s.Git, Ref: s.Ref, Path: s.Path})
	}
	return out
}

// SyncSkills fetches every git source of skills.sources at its ref into
// data_dir/skills. A failed fetch keeps the last good copy; the errors
// say so, one per source.
func SyncSkills(ctx context.Context, cfg *config.Config) error {
	var errs []error
	for _, src := range skillSources(cfg) {
		_, probs, err := skills.Sync(ctx, cfg.DataDir, src)
		for _, p := range probs {
			errs = append(errs, errors.New(p.String()))
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// agentSkills is which skills each agent uses: always, and per when block.
type agentSkills struct {
	base []string
	when [][]string // by index of agents[i].when
}

func (s agentSkills) all() []string {
	out := slices.Clone(s.base)
	for _, w := range s.when {
		out = append(out, w...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// LoadSkills loads the skill catalog and resolves each agent's skills.
// Every invalid skill, missing source and pattern that matches nothing is
// an error, with its file and line; partial (brain config check) skips
// git sources that were never fetched and the patterns they might match.
func LoadSkills(cfg *config.Config, partial bool) (*skills.Catalog, map[string]agentSkills, error) {
	srcs := skillSources(cfg)
	unfetched := false
	if partial {
		srcs = slices.DeleteFunc(srcs, func(s skills.Source) bool {
			if s.IsGit() && s.Fetched(cfg.DataDir) == "" {
				unfetched = true
				return true
			}
			return false
		})
	}
	cat, probs := skills.Load(cfg.DataDir, srcs)
	var errs []error
	for _, p := range probs {
		errs = append(errs, fmt.Errorf("skill %s", p))
	}
	resolve := func(key string, patterns []string) []string {
		var out []string
		for k, pat := range patterns {
			m := cat.Match(pat)
			if len(m) == 0 && !unfetched && len(probs) == 0 {
				at := ""
				if line := cfg.Line(fmt.Sprintf("%s[%d]", key, k)); line > 0 {
					at = fmt.Sprintf(" (line %d)", line)
				}
				errs = append(errs, fmt.Errorf("%s[%d]%s: %q matches no skill (skills: %s)", key, k, at, pat, strings.Join(cat.Names(), ", ")))
			}
			out = append(out, m...)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	uses := map[string]agentSkills{}
	for i, a := range cfg.Agents {
		s := agentSkills{base: resolve(fmt.Sprintf("agents[%d].skills", i), a.Skills)}
		for j, w := range a.When {
			s.when = append(s.when, resolve(fmt.Sprintf("agents[%d].when[%d].skills", i, j), w.Skills))
		}
		uses[a.Name] = s
	}
	return cat, uses, errors.Join(errs...)
}

// startSkills fetches the git sources (a failure is logged and the last
// good copy used) and loads the catalog; any problem refuses the start.
func startSkills(ctx context.Context, cfg *config.Config, log *slog.Logger) (*skills.Catalog, map[string]agentSkills, error) {
	if len(cfg.Skills.Sources) == 0 {
		return nil, nil, nil
	}
	if err := SyncSkills(ctx, cfg); err != nil {
		log.Warn("skills sync failed: "+err.Error(), tools.LogComponent, "skills")
	}
	cat, uses, err := LoadSkills(cfg, false)
	if err != nil {
		return nil, nil, fmt.Errorf("skills:\n%w", err)
	}
	return cat, uses, nil
}

// skillBinds is the sandbox's read-only mounts of each agent's skills.
func skillBinds(cat *skills.Catalog, uses map[string]agentSkills) func(agent string) []sandbox.Bind {
	return func(agent string) []sandbox.Bind {
		var out []sandbox.Bind
		for _, n := range uses[agent].all() {
			if dir, err := cat.Dir(n); err == nil {
				out = append(out, sandbox.Bind{Source: dir, Target: skillMount + "/" + n})
			}
		}
		return out
	}
}

// attachSkills gives each agent with skills its Extend: the listing of the
// turn's skills (always, and those of its matching when blocks) and the
// skill tool over them.
func attachSkills(cfg *config.Config, agents []*engine.Agent, cat *skills.Catalog, uses map[string]agentSkills) {
	if cat == nil {
		return
	}
	mount := ""
	if cfg.Tools.SandboxExec != nil {
		mount = skillMount
	}
	for i, a := range agents {
		ac, use := cfg.Agents[i], uses[a.Name]
		if len(use.all()) == 0 {
			continue
		}
		var mu sync.Mutex
		compiled := map[string]*tools.Tool{} // by the turn's skill names
		a.Extend = func(input string) (string, []*tools.Tool) {
			names := slices.Clone(use.base)
			for j := range ac.When {
				if ac.When[j].Matches(input) {
					names = append(names, use.when[j]...)
				}
			}
			slices.Sort(names)
			names = slices.Compact(names)
			if len(names) == 0 {
				return "", nil
			}
			cat.Refresh(names)
			key := strings.Join(names, ",")
			mu.Lock()
			defer mu.Unlock()
			t, ok := compiled[key]
			if !ok {
				var err error
				if t, err = tools.Compile(skills.Tool(cat, names, mount)); err != nil {
					return "", nil // cannot happen: the definition is fixed
				}
				compiled[key] = t
			}
			return cat.Listing(names, mount), []*tools.Tool{t}
		}
	}
}

// SkillRow is one skill as the console and brain skills list show it.
type SkillRow struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Source      string   `json:"source"`
	Hash        string   `json:"hash"`
	Agents      []string `json:"agents"`
}

// skillRows lists the catalog's skills with their source, current hash
// and the agents that use them, by name.
func skillRows(cfg *config.Config, cat *skills.Catalog, uses map[string]agentSkills) []SkillRow {
	var rows []SkillRow
	for _, n := range cat.Names() {
		e, _ := cat.Entry(n)
		if _, h, err := cat.Read(n); err == nil {
			e.Hash = h
		}
		r := SkillRow{Name: n, Description: e.Description, Source: e.Source.Name + " (" + e.Source.Describe() + ")", Hash: e.Hash, Agents: []string{}}
		for _, a := range cfg.Agents {
			if slices.Contains(uses[a.Name].all(), n) {
				r.Agents = append(r.Agents, a.Name)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// consoleSkills is the console's skills page: the rows of brain skills
// list, read again at each view.
func consoleSkills(cfg *config.Config, cat *skills.Catalog, uses map[string]agentSkills) []web.Skill {
	if cat == nil {
		return nil
	}
	rows := skillRows(cfg, cat, uses)
	out := make([]web.Skill, len(rows))
	for i, r := range rows {
		out[i] = web.Skill{Name: r.Name, Description: r.Description, Source: r.Source, Hash: r.Hash, Short: skills.Short(r.Hash), Agents: r.Agents}
	}
	return out
}

// ListSkills is brain skills list: every skill of skills.sources as the
// files are now (git sources as last synced), without starting anything.
func ListSkills(cfg *config.Config) ([]SkillRow, error) {
	cat, uses, err := LoadSkills(cfg, true)
	return skillRows(cfg, cat, uses), err
}

// ShortHash is a skill's content hash as people read it (12 hex digits).
func ShortHash(hash string) string { return skills.Short(hash) }

// startSkills loads the skills for the app and returns the sandbox's
// read-only mounts of them (nil without skills).
func (a *App) startSkills(ctx context.Context) (func(string) []sandbox.Bind, error) {
	cat, uses, err := startSkills(ctx, a.cfg, a.log)
	if err != nil {
		return nil, err
	}
	a.skills, a.skillUses = cat, uses
	if cat == nil {
		return nil, nil
	}
	return skillBinds(cat, uses), nil
}
