package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/internal/threadkey"
	"brain/store"
	"brain/tools"
	"brain/tools/memory"
)

// withMemoryTools gives each agent with a memory block its memory tool.
// changed records a change in its session (the engine, once built).
func withMemoryTools(cfg *config.Config, agents []*engine.Agent, st store.Store, now func() time.Time,
	changed func(ctx context.Context, sessionID string, c memory.Change) error) error {
	scrub := tools.NewScrubber(cfg.Secrets()...)
	for i, ac := range cfg.Agents {
		m := ac.Memory
		if m == nil {
			continue
		}
		def := memory.Definition(memory.Config{
			Store:    memoryStore{st: st, now: now},
			Locate:   memoryLocator(st, ac.Name, m.Scopes),
			ReadOnly: m.ReadOnly,
			Limits:   memory.Limits{MaxFiles: m.MaxFiles, MaxBytes: m.MaxBytes},
			Scrub:    scrub,
			Changed:  changed,
		})
		t, err := tools.Compile(def)
		if err != nil {
			return fmt.Errorf("agents[%d].memory: %w", i, err)
		}
		for _, a := range agents {
			if a.Name == ac.Name {
				a.Tools = append(a.Tools, t)
			}
		}
	}
	return nil
}

// memoryLocator finds the scopes a session of agent sees: the agent's
// own, its thread's channel (a Slack channel, a Linear team, a GitHub
// repository), and
// the person who started it (see personScope).
func memoryLocator(st store.Store, agent string, scopes []string) func(ctx context.Context, call tools.Call) (memory.Where, error) {
	return func(ctx context.Context, call tools.Call) (memory.Where, error) {
		s, err := st.Session(ctx, call.SessionID)
		if err != nil {
			return memory.Where{}, err
		}
		w := memory.Where{By: s.StartedBy, Missing: map[string]string{}}
		for _, sc := range scopes {
			switch sc {
			case config.MemoryScopeAgent:
				w.Scopes = append(w.Scopes, memory.Scope{Dir: memory.ScopeAgent, Key: "agent:" + agent})
			case config.MemoryScopeChannel:
				place, ok, err := channelPlace(ctx, st, s)
				if err != nil {
					return memory.Where{}, err
				}
				if ok {
					w.Scopes = append(w.Scopes, memory.Scope{Dir: memory.ScopeChannel, Key: "channel:" + place})
				} else {
					w.Missing[memory.ScopeChannel] = fmt.Sprintf("this %s session is in no shared channel, team or repository", s.Origin)
				}
			case config.MemoryScopePerson:
				key, ok, err := personScope(ctx, st, s)
				if err != nil {
					return memory.Where{}, err
				}
				if ok {
					w.Scopes = append(w.Scopes, memory.Scope{Dir: memory.ScopePerson, Key: key})
				} else {
					w.Missing[memory.ScopePerson] = "nobody started this session (it runs on a schedule or for an API client)"
				}
			}
		}
		return w, nil
	}
}

// channelPlace is the place whose channel memory s shares: a Slack
// channel or a GitHub repository (named by the thread key), or the team
// of a Linear session's issue (recorded from its webhooks, since a Linear
// thread key names only the agent session).
func channelPlace(ctx context.Context, st store.Store, s engine.Session) (string, bool, error) {
	if place, ok := threadkey.Place(s.ThreadKey); ok {
		return place, true, nil
	}
	t, ok := threadkey.ParseLinear(s.ThreadKey)
	if !ok {
		return "", false, nil
	}
	team, ok, err := st.LinearSessionTeam(ctx, t.Session)
	if err != nil || !ok {
		return "", false, err
	}
	return "linear:" + team, true, nil
}

// personScope is the person scope of s. When the identity that started s
// is linked to a person (store.People: POST /v1/people/{id}/identities),
// it is that person's, "person:id:ID", the same from every surface they
// are linked on: what they told the agent in Slack is there when they
// start a session in the console. Otherwise it is keyed by the platform
// identity ("person:slack:T1:U1", "person:console:NAME"); "id" is no
// origin, so the two kinds never meet. ok is false when nobody started s.
func personScope(ctx context.Context, people store.People, s engine.Session) (key string, ok bool, err error) {
	who, ok := personOf(s)
	if !ok {
		return "", false, nil
	}
	// Origins and identity surfaces share their names (store.SurfaceSlack
	// is "slack", ...); a console session's starter is its console
	// sign-in name (a key's name, or the Slack user id of a Slack sign-in).
	p, err := people.PersonByIdentity(ctx, store.Identity{Surface: string(s.Origin), ExternalID: s.StartedBy})
	switch {
	case err == nil:
		return "person:id:" + p.ID, true, nil
	case errors.Is(err, engine.ErrNotFound):
		return "person:" + who, true, nil
	}
	return "", false, fmt.Errorf("person of session %s: %w", s.ID, err)
}

// personOf is the platform identity of the person who started s.
func personOf(s engine.Session) (string, bool) {
	if s.StartedBy == "" || s.Origin == engine.OriginSchedule {
		return "", false
	}
	if t, ok := threadkey.ParseSlack(s.ThreadKey); ok {
		// Slack user ids are a workspace's.
		return string(s.Origin) + ":" + t.Team + ":" + s.StartedBy, true
	}
	return string(s.Origin) + ":" + s.StartedBy, true
}

// MemoryStore is st as the memory tool asks it, stamping writes with now.
func MemoryStore(st store.Memory, now func() time.Time) memory.Store {
	return memoryStore{st: st, now: now}
}

// memoryStore is the store contract as the memory tool asks it.
type memoryStore struct {
	st  store.Memory
	now func() time.Time
}

func (m memoryStore) File(ctx context.Context, scope, path string) (memory.File, error) {
	f, err := m.st.MemoryFile(ctx, scope, path)
	if errors.Is(err, engine.ErrNotFound) {
		return memory.File{}, fmt.Errorf("%w: %s", memory.ErrNotFound, engine.ErrorMessage(err))
	}
	if err != nil {
		return memory.File{}, err
	}
	return memory.File{Path: f.Path, Content: f.Content, Version: f.Version}, nil
}

func (m memoryStore) Files(ctx context.Context, scope string) ([]memory.File, error) {
	files, err := m.st.MemoryFiles(ctx, scope)
	if err != nil {
		return nil, err
	}
	out := make([]memory.File, len(files))
	for i, f := range files {
		out[i] = memory.File{Path: f.Path, Content: f.Content, Version: f.Version}
	}
	return out, nil
}

func (m memoryStore) Commit(ctx context.Context, c memory.Commit) error {
	mc := store.MemoryCommit{
		Scope: c.Scope, Now: m.now(), By: c.By, SessionID: c.SessionID,
		MaxFiles: c.Limits.MaxFiles, MaxBytes: c.Limits.MaxBytes,
	}
	for _, w := range c.Writes {
		mc.Writes = append(mc.Writes, store.MemoryWrite{Path: w.Path, Expect: w.Expect, Content: w.Content, Delete: w.Delete, Op: w.Op, Diff: w.Diff})
	}
	err := m.st.CommitMemory(ctx, mc)
	switch {
	case errors.Is(err, engine.ErrConflict):
		return fmt.Errorf("%w: %s", memory.ErrConflict, engine.ErrorMessage(err))
	case err != nil && engine.CodeOf(err) == engine.CodeTooLarge:
		return fmt.Errorf("%w: %s", memory.ErrFull, engine.ErrorMessage(err))
	}
	return err
}

// recordMemoryChange is the memory tool's Changed: a memory.changed event
// in the session that made the change.
func recordMemoryChange(eng func() *engine.Engine) func(ctx context.Context, sessionID string, c memory.Change) error {
	return func(ctx context.Context, sessionID string, c memory.Change) error {
		_, err := eng().RecordMemoryChanged(ctx, sessionID, engine.MemoryChanged{
			Command: c.Command, Scope: c.Scope, Path: c.Path, NewPath: c.NewPath, Version: c.Version, Diff: c.Diff,
		})
		return err
	}
}
