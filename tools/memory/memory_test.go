package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"brain/tools"
)

// mapStore is a Store in a map, with the store contract's version checks
// and limits; the drivers' own behaviour is checked by store/storetest.
type mapStore struct {
	mu    sync.Mutex
	files map[string]File // by scope + "\x00" + path
	// afterRead, when set, runs after each File read (once per call).
	afterRead func()
}

func newMapStore() *mapStore { return &mapStore{files: map[string]File{}} }

func (m *mapStore) File(_ context.Context, scope, path string) (File, error) {
	m.mu.Lock()
	f, ok := m.files[scope+"\x00"+path]
	hook := m.afterRead
	m.afterRead = nil
	m.mu.Unlock()
	if hook != nil {
		hook()
	}
	if !ok {
		return File{}, fmt.Errorf("%s %s: %w", scope, path, ErrNotFound)
	}
	return f, nil
}

func (m *mapStore) Files(_ context.Context, scope string) ([]File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []File
	for k, f := range m.files {
		if strings.HasPrefix(k, scope+"\x00") {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func (m *mapStore) Commit(_ context.Context, c Commit) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := map[string]File{}
	for k, f := range m.files {
		next[k] = f
	}
	for _, w := range c.Writes {
		k := c.Scope + "\x00" + w.Path
		if next[k].Version != w.Expect {
			return fmt.Errorf("%s: %w", w.Path, ErrConflict)
		}
		if w.Delete {
			delete(next, k)
		} else {
			next[k] = File{Path: w.Path, Content: w.Content, Version: w.Expect + 1}
		}
	}
	files, bytes := 0, int64(0)
	for k, f := range next {
		if strings.HasPrefix(k, c.Scope+"\x00") {
			files++
			bytes += int64(len(f.Content))
		}
	}
	if c.Limits.MaxFiles > 0 && files > c.Limits.MaxFiles {
		return fmt.Errorf("%w: memory scope %s would hold %d files; its limit is %d", ErrFull, c.Scope, files, c.Limits.MaxFiles)
	}
	if c.Limits.MaxBytes > 0 && bytes > c.Limits.MaxBytes {
		return fmt.Errorf("%w: memory scope %s would hold %d bytes; its limit is %d", ErrFull, c.Scope, bytes, c.Limits.MaxBytes)
	}
	m.files = next
	return nil
}

type rig struct {
	store   *mapStore
	cfg     Config
	changes []Change
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{store: newMapStore()}
	r.cfg = Config{
		Store: r.store,
		Locate: func(context.Context, tools.Call) (Where, error) {
			return Where{
				Scopes:  []Scope{{ScopeAgent, "agent:helper"}, {ScopePerson, "person:slack:T1:U1"}},
				By:      "U1",
				Missing: map[string]string{ScopeChannel: "this session has no channel (it was started through the API)"},
			}, nil
		},
		Changed: func(_ context.Context, _ string, c Change) error { r.changes = append(r.changes, c); return nil },
	}
	return r
}

// call runs one command and returns its text, or its error's.
func (r *rig) call(t *testing.T, args map[string]any) (string, bool) {
	t.Helper()
	in, _ := json.Marshal(args)
	out, err := Definition(r.cfg).Run(context.Background(), tools.Call{Input: in, SessionID: "ses_1", ToolCallID: "c1"})
	if err != nil {
		var te *tools.Error
		if !errors.As(err, &te) {
			t.Fatalf("%v: a non-tool error %v", args, err)
		}
		return err.Error(), false
	}
	var text string
	if err := json.Unmarshal(out, &text); err != nil {
		t.Fatalf("output %s is not a JSON string", out)
	}
	return text, true
}

func (r *rig) must(t *testing.T, args map[string]any, want string) string {
	t.Helper()
	got, ok := r.call(t, args)
	if !ok || !strings.Contains(got, want) {
		t.Fatalf("%v = %q (ok %v), want it to hold %q", args, got, ok, want)
	}
	return got
}

func (r *rig) fails(t *testing.T, args map[string]any, want string) {
	t.Helper()
	got, ok := r.call(t, args)
	if ok || !strings.Contains(got, want) {
		t.Fatalf("%v = %q (ok %v), want an error holding %q", args, got, ok, want)
	}
}

func TestMemory_Commands(t *testing.T) {
	r := newRig(t)
	r.must(t, map[string]any{"command": "create", "path": "/memories/agent/deploy.md", "file_text": "step one\nstep two\n"},
		"File created successfully at: /memories/agent/deploy.md")
	r.fails(t, map[string]any{"command": "create", "path": "/memories/agent/deploy.md", "file_text": "x"},
		"Error: File /memories/agent/deploy.md already exists")
	r.must(t, map[string]any{"command": "view", "path": "/memories/agent/deploy.md"},
		"Here's the content of /memories/agent/deploy.md with line numbers:\n     1\tstep one\n     2\tstep two\n     3\t\n")
	r.must(t, map[string]any{"command": "view", "path": "/memories/agent/deploy.md", "view_range": []int{2, -1}}, "     2\tstep two\n")
	r.fails(t, map[string]any{"command": "view", "path": "/memories/agent/deploy.md", "view_range": []int{0, 9}}, "Invalid `view_range`")

	got := r.must(t, map[string]any{"command": "view", "path": "/memories"},
		"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n")
	for _, line := range []string{"18\t/memories\n", "18\t/memories/agent\n", "18\t/memories/agent/deploy.md\n", "0\t/memories/person\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("view /memories = %q, want the line %q", got, line)
		}
	}

	r.must(t, map[string]any{"command": "str_replace", "path": "/memories/agent/deploy.md", "old_str": "step two", "new_str": "step 2"},
		"The memory file has been edited.\n     1\tstep one\n     2\tstep 2\n")
	r.fails(t, map[string]any{"command": "str_replace", "path": "/memories/agent/deploy.md", "old_str": "step three", "new_str": "x"},
		"No replacement was performed, old_str `step three` did not appear verbatim in /memories/agent/deploy.md.")
	r.fails(t, map[string]any{"command": "str_replace", "path": "/memories/agent/deploy.md", "old_str": "step", "new_str": "x"},
		"No replacement was performed. Multiple occurrences of old_str `step` in lines: 1, 2. Please ensure it is unique")
	r.fails(t, map[string]any{"command": "str_replace", "path": "/memories/agent/nope.md", "old_str": "a", "new_str": "b"},
		"Error: The path /memories/agent/nope.md does not exist. Please provide a valid path.")

	r.must(t, map[string]any{"command": "insert", "path": "/memories/agent/deploy.md", "insert_line": 0, "insert_text": "# Deploy\n"},
		"The file /memories/agent/deploy.md has been edited.")
	r.fails(t, map[string]any{"command": "insert", "path": "/memories/agent/deploy.md", "insert_line": 9, "insert_text": "x"},
		"Error: Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 4]")
	if f, _ := r.store.File(context.Background(), "agent:helper", "deploy.md"); f.Content != "# Deploy\nstep one\nstep 2\n" || f.Version != 3 {
		t.Fatalf("stored file = %+v", f)
	}

	r.must(t, map[string]any{"command": "rename", "old_path": "/memories/agent/deploy.md", "new_path": "/memories/agent/runbooks/deploy.md"},
		"Successfully renamed /memories/agent/deploy.md to /memories/agent/runbooks/deploy.md")
	r.must(t, map[string]any{"command": "create", "path": "/memories/agent/other.md", "file_text": "o"}, "created")
	r.fails(t, map[string]any{"command": "rename", "old_path": "/memories/agent/other.md", "new_path": "/memories/agent/runbooks"},
		"Error: The destination /memories/agent/runbooks already exists")
	r.fails(t, map[string]any{"command": "rename", "old_path": "/memories/agent/gone.md", "new_path": "/memories/agent/x.md"},
		"Error: The path /memories/agent/gone.md does not exist")
	r.fails(t, map[string]any{"command": "rename", "old_path": "/memories/agent/other.md", "new_path": "/memories/person/other.md"},
		"rename moves within one scope")
	r.must(t, map[string]any{"command": "view", "path": "/memories/agent/runbooks"}, "/memories/agent/runbooks/deploy.md\n")

	r.must(t, map[string]any{"command": "delete", "path": "/memories/agent/runbooks"}, "Successfully deleted /memories/agent/runbooks")
	r.fails(t, map[string]any{"command": "delete", "path": "/memories/agent/runbooks"}, "Error: The path /memories/agent/runbooks does not exist")
	r.fails(t, map[string]any{"command": "delete", "path": "/memories/agent"}, "cannot be deleted")
	r.fails(t, map[string]any{"command": "view", "path": "/memories/agent/runbooks/deploy.md"},
		"The path /memories/agent/runbooks/deploy.md does not exist. Please provide a valid path.")

	ops := []string{}
	for _, c := range r.changes {
		ops = append(ops, c.Command)
		if c.Scope != "agent:helper" {
			t.Errorf("change %+v names scope %q", c, c.Scope)
		}
	}
	if got := strings.Join(ops, " "); got != "create str_replace insert rename create delete" {
		t.Errorf("changes recorded = %s", got)
	}
	if d := r.changes[1].Diff; d != "-step two\n+step 2" {
		t.Errorf("str_replace diff = %q", d)
	}
	if c := r.changes[1]; c.Path != "/memories/agent/deploy.md" || c.Version != 2 {
		t.Errorf("str_replace change = %+v", c)
	}
}

// Paths stay inside /memories and the session's own scopes.
func TestMemory_Paths(t *testing.T) {
	r := newRig(t)
	for _, p := range []string{
		"/etc/passwd", "/memories/../etc", "/memories/agent/../person/x", "/memories/agent/./x", "/memories//agent/x",
		"memories/agent/x", "/memories/agent\\x", "/memories/agent/x\x00y", "/memoriesX/agent", "/memories/agent/" + strings.Repeat("a", 600),
	} {
		r.fails(t, map[string]any{"command": "create", "path": p, "file_text": "x"}, "Error")
	}
	r.fails(t, map[string]any{"command": "view", "path": "/memories/channel"}, "this session has no channel")
	r.fails(t, map[string]any{"command": "create", "path": "/memories/team/x", "file_text": "x"},
		"The path /memories/team/x does not exist. Please provide a valid path.")
	r.fails(t, map[string]any{"command": "create", "path": "/memories/agent", "file_text": "x"}, "is a directory")
	r.must(t, map[string]any{"command": "create", "path": "/memories/agent/a.md", "file_text": "x"}, "created")
	r.fails(t, map[string]any{"command": "create", "path": "/memories/agent/a.md/b.md", "file_text": "x"}, "is a file")
	if len(r.store.files) != 1 {
		t.Errorf("refused paths stored files: %v", r.store.files)
	}
}

func TestMemory_LimitsScrubReadOnly(t *testing.T) {
	r := newRig(t)
	r.cfg.Limits = Limits{MaxFiles: 2, MaxBytes: 64}
	r.cfg.Scrub = tools.NewScrubber("sk-live-0123456789abcdef")
	r.must(t, map[string]any{"command": "create", "path": "/memories/agent/key.md", "file_text": "the key is sk-live-0123456789abcdef"},
		"secrets in it were replaced with [REDACTED]")
	if f, _ := r.store.File(context.Background(), "agent:helper", "key.md"); strings.Contains(f.Content, "sk-live") || !strings.Contains(f.Content, tools.Redacted) {
		t.Fatalf("stored %q", f.Content)
	}
	if d := r.changes[0].Diff; strings.Contains(d, "sk-live") {
		t.Fatalf("the change's diff holds the secret: %q", d)
	}
	r.must(t, map[string]any{"command": "create", "path": "/memories/agent/b.md", "file_text": "b"}, "created")
	r.fails(t, map[string]any{"command": "create", "path": "/memories/agent/c.md", "file_text": "c"},
		"would hold 3 files; its limit is 2; nothing was written")
	r.fails(t, map[string]any{"command": "str_replace", "path": "/memories/agent/b.md", "old_str": "b", "new_str": strings.Repeat("b", 100)},
		"would hold 121 bytes; its limit is 64")

	r.cfg.ReadOnly = true
	if !strings.Contains(Definition(r.cfg).Description, "read-only") {
		t.Error("a read-only memory's description does not say so")
	}
	r.must(t, map[string]any{"command": "view", "path": "/memories/agent/b.md"}, "     1\tb")
	for _, cmd := range []map[string]any{
		{"command": "create", "path": "/memories/agent/d.md", "file_text": "d"},
		{"command": "delete", "path": "/memories/agent/b.md"},
		{"command": "rename", "old_path": "/memories/agent/b.md", "new_path": "/memories/agent/e.md"},
	} {
		r.fails(t, cmd, "memory is read-only for this agent; nothing was written")
	}
	if len(r.store.files) != 2 {
		t.Errorf("files = %v", r.store.files)
	}
}

// An edit whose file changed between its read and its write is refused
// with an error the model can act on, and the other edit survives.
func TestMemory_ConflictIsClear(t *testing.T) {
	r := newRig(t)
	r.must(t, map[string]any{"command": "create", "path": "/memories/agent/n.md", "file_text": "count: 1\nowner: ann\n"}, "created")
	r.store.afterRead = func() {
		r.must(t, map[string]any{"command": "str_replace", "path": "/memories/agent/n.md", "old_str": "owner: ann", "new_str": "owner: bob"}, "edited")
	}
	r.fails(t, map[string]any{"command": "str_replace", "path": "/memories/agent/n.md", "old_str": "count: 1", "new_str": "count: 2"},
		"Error: /memories/agent/n.md was changed by another session after you read it (you read version 1); nothing was written. View it again and retry")
	r.must(t, map[string]any{"command": "str_replace", "path": "/memories/agent/n.md", "old_str": "count: 1", "new_str": "count: 2"}, "edited")
	if f, _ := r.store.File(context.Background(), "agent:helper", "n.md"); f.Content != "count: 2\nowner: bob\n" {
		t.Fatalf("after the retry = %q", f.Content)
	}
}

func TestMemory_HoldCard(t *testing.T) {
	d := Definition(Config{})
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
	card, err := d.Hold(context.Background(), tools.Call{Input: json.RawMessage(`{"command":"create","path":"/memories/agent/a.md","file_text":"hello"}`)})
	if err != nil || card.Title != "Memory: create /memories/agent/a.md" || len(card.Facts) != 1 || card.Facts[0].Value != "hello" {
		t.Fatalf("card = %+v, %v", card, err)
	}
}
