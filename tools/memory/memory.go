// Package memory is the memory tool: Anthropic's memory tool contract
// (the commands view, create, str_replace, insert, delete and rename over
// a /memories tree, with the contract's result and error texts), offered
// to any model and executed by brain. Each scope a session may see (its
// agent's, its channel's, its person's) is a directory under /memories;
// the files live in a Store, which names every write's expected version,
// so two sessions editing one file never lose an update: the later one is
// told the file changed and can read it again.
//
// It imports only tools; bot adapts the store contract to Store and
// records each change in the session (Config.Changed).
package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"brain/tools"
)

// Name is the tool's name, as the contract has it.
const Name = "memory"

// Root is the directory every path lives under.
const Root = "/memories"

// Scope directories.
const (
	ScopeAgent   = "agent"
	ScopeChannel = "channel"
	ScopePerson  = "person"
)

// Scope is one directory of /memories: Dir is its name there, Key the
// store's name for it ("agent:NAME", "channel:slack:T:C" ...).
type Scope struct {
	Dir string
	Key string
}

// Where is what a call may see: its scopes, in order, and who the
// session speaks for (recorded as the author of its changes).
type Where struct {
	Scopes []Scope
	By     string
	// Missing says why a configured scope is absent from Scopes (a
	// session with no channel), by directory, for the model to read.
	Missing map[string]string
}

// File is one stored file.
type File struct {
	Path    string
	Content string
	Version int64
}

// Write is one change of a Commit; see the store contract's MemoryWrite.
type Write struct {
	Path    string
	Expect  int64
	Content string
	Delete  bool
	Op      string
	Diff    string
}

// Commit changes files of one scope at once, each only if it still has
// the version read.
type Commit struct {
	Scope     string
	By        string
	SessionID string
	Writes    []Write
	Limits    Limits
}

// Limits bound a scope; zero means unbounded.
type Limits struct {
	MaxFiles int
	MaxBytes int64
}

// Errors a Store returns (wrapped, with a message fit for the model).
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("changed meanwhile")
	ErrFull     = errors.New("over the scope's limit")
)

// Store keeps the files.
type Store interface {
	File(ctx context.Context, scope, path string) (File, error)
	Files(ctx context.Context, scope string) ([]File, error)
	Commit(ctx context.Context, c Commit) error
}

// Change is one change a call made, for the session's memory.changed.
type Change struct {
	Command string
	Scope   string
	Path    string
	NewPath string
	Version int64
	Diff    string
}

// Config is how the tool is built for one agent.
type Config struct {
	Store Store
	// Locate finds what the call's session may see.
	Locate func(ctx context.Context, call tools.Call) (Where, error)
	// ReadOnly refuses every command but view.
	ReadOnly bool
	Limits   Limits
	// Scrub redacts secrets from what is stored.
	Scrub *tools.Scrubber
	// Changed records a change in the session that made it; nil records
	// nothing.
	Changed func(ctx context.Context, sessionID string, c Change) error
}

// input is the contract's arguments, every command's in one shape.
type input struct {
	Command    string `json:"command"`
	Path       string `json:"path"`
	ViewRange  []int  `json:"view_range"`
	FileText   string `json:"file_text"`
	OldStr     string `json:"old_str"`
	NewStr     string `json:"new_str"`
	InsertLine *int   `json:"insert_line"`
	InsertText string `json:"insert_text"`
	OldPath    string `json:"old_path"`
	NewPath    string `json:"new_path"`
}

const inputSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "delete", "rename"]},
    "path": {"type": "string", "description": "A path under /memories (view, create, str_replace, insert, delete)."},
    "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2, "description": "view: first and last line, 1-based; -1 as the last means the end."},
    "file_text": {"type": "string", "description": "create: the file's content."},
    "old_str": {"type": "string", "description": "str_replace: text that appears exactly once in the file."},
    "new_str": {"type": "string", "description": "str_replace: its replacement."},
    "insert_line": {"type": "integer", "description": "insert: the line after which to insert (0 = at the top)."},
    "insert_text": {"type": "string", "description": "insert: the text to insert."},
    "old_path": {"type": "string", "description": "rename: the file or directory to move."},
    "new_path": {"type": "string", "description": "rename: where to move it."}
  },
  "required": ["command"]
}`

// Definition is the memory tool. It runs at once; approval policies
// naming it may still hold a write for a person (Hold builds the card).
func Definition(cfg Config) tools.Definition {
	desc := "Your memory across conversations: a directory of files under /memories, kept between sessions. " +
		"Each subdirectory is a scope: agent/ (every session of this agent), channel/ (this channel, team or repository), " +
		"person/ (the person you are talking to). Check it (view /memories) before starting a task, and record what you learn " +
		"that will help later: decisions, preferences, procedures. Commands: view, create, str_replace, insert, delete, rename. " +
		"Never store secrets."
	if cfg.ReadOnly {
		desc += " This memory is read-only: only view works."
	}
	return tools.Definition{
		Name:        Name,
		Description: desc,
		Input:       json.RawMessage(inputSchema),
		Run: func(ctx context.Context, call tools.Call) (json.RawMessage, error) {
			text, err := cfg.run(ctx, call)
			if err != nil {
				return nil, err
			}
			return json.Marshal(text)
		},
		Hold: holdCard,
	}
}

func (cfg Config) run(ctx context.Context, call tools.Call) (string, error) {
	var in input
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return "", tools.Failed("Error: the arguments are not a memory command: %v", err)
	}
	where, err := cfg.Locate(ctx, call)
	if err != nil {
		return "", tools.Failed("Error: cannot tell which memory this session may see: %v", err)
	}
	t := &tree{cfg: cfg, call: call, where: where}
	if in.Command != "view" && cfg.ReadOnly {
		return "", tools.Failed("Error: memory is read-only for this agent; nothing was written. Only view works.")
	}
	switch in.Command {
	case "view":
		return t.view(ctx, in.Path, in.ViewRange)
	case "create":
		return t.create(ctx, in.Path, in.FileText)
	case "str_replace":
		return t.strReplace(ctx, in.Path, in.OldStr, in.NewStr)
	case "insert":
		if in.InsertLine == nil {
			return "", tools.Failed("Error: Parameter `insert_line` is required for command: insert")
		}
		return t.insert(ctx, in.Path, *in.InsertLine, in.InsertText)
	case "delete":
		return t.delete(ctx, in.Path)
	case "rename":
		return t.rename(ctx, in.OldPath, in.NewPath)
	}
	return "", tools.Failed("Error: unknown command %q; use view, create, str_replace, insert, delete or rename", in.Command)
}

// holdCard is what a person sees when a policy holds a write.
func holdCard(_ context.Context, call tools.Call) (tools.Card, error) {
	var in input
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return tools.Card{}, fmt.Errorf("memory: %w", err)
	}
	c := tools.Card{Title: "Memory: " + in.Command + " " + in.Path}
	add := func(label, value string) {
		if value != "" {
			c.Facts = append(c.Facts, tools.Fact{Label: label, Value: clip(value, 500)})
		}
	}
	if in.Command == "rename" {
		c.Title = "Memory: rename " + in.OldPath
		add("To", in.NewPath)
	}
	add("Text", in.FileText)
	add("Replace", in.OldStr)
	add("With", in.NewStr)
	add("Insert", in.InsertText)
	return c, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s[:n])
	return string(r[:len(r)-1]) + "…"
}
