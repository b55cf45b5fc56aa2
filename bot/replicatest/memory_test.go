package replicatest

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/bot"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/sqlite"
	"brain/tools"
	"brain/tools/memory"
)

// pausingStore runs pause after its next file read: another session's
// whole edit lands between this one's read and its write.
type pausingStore struct {
	memory.Store
	pause func()
}

func (p *pausingStore) File(ctx context.Context, scope, path string) (memory.File, error) {
	f, err := p.Store.File(ctx, scope, path)
	if pause := p.pause; pause != nil {
		p.pause = nil
		pause()
	}
	return f, err
}

func memoryOn(st memory.Store, session string) func(ctx context.Context, input string) (string, error) {
	def := memory.Definition(memory.Config{
		Store: st,
		Locate: func(context.Context, tools.Call) (memory.Where, error) {
			return memory.Where{Scopes: []memory.Scope{{Dir: "agent", Key: "agent:ops"}}, By: session}, nil
		},
	})
	return func(ctx context.Context, input string) (string, error) {
		out, err := def.Run(ctx, tools.Call{Input: json.RawMessage(input), SessionID: session})
		var text string
		_ = json.Unmarshal(out, &text)
		return text, err
	}
}

// testConcurrentStrReplace: two sessions on two store handles (two brain
// processes, as two replicas) edit one memory file at once. One wins; the other is told
// the file changed and, retrying, lands its edit too: nothing is lost.
func testConcurrentStrReplace(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	slow := &pausingStore{Store: bot.MemoryStore(a, now)}
	runA := memoryOn(slow, "ses_a")
	runB := memoryOn(bot.MemoryStore(b, now), "ses_b")
	if _, err := runA(ctx, `{"command":"create","path":"/memories/agent/oncall.md","file_text":"primary: ann\nsecondary: bob\n"}`); err != nil {
		t.Fatal(err)
	}
	var bErr error
	slow.pause = func() {
		_, bErr = runB(ctx, `{"command":"str_replace","path":"/memories/agent/oncall.md","old_str":"secondary: bob","new_str":"secondary: cat"}`)
	}
	editA := `{"command":"str_replace","path":"/memories/agent/oncall.md","old_str":"primary: ann","new_str":"primary: dan"}`
	_, err := runA(ctx, editA)
	if bErr != nil {
		t.Fatalf("the first edit to land failed: %v", bErr)
	}
	var te *tools.Error
	if !errors.As(err, &te) || !strings.Contains(te.Message, "was changed by another session after you read it") ||
		!strings.Contains(te.Message, "nothing was written") {
		t.Fatalf("the losing edit = %v, want a clear conflict error", err)
	}
	if _, err := runA(ctx, editA); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	f, err := b.MemoryFile(ctx, "agent:ops", "oncall.md")
	if err != nil || f.Content != "primary: dan\nsecondary: cat\n" || f.Version != 3 {
		t.Fatalf("file = %+v, %v; want both edits at version 3", f, err)
	}
	hist, _ := a.MemoryHistory(ctx, "agent:ops", "oncall.md", 0)
	if len(hist) != 3 || hist[0].SessionID != "ses_a" || hist[1].SessionID != "ses_b" {
		t.Fatalf("history = %+v", hist)
	}
}

func TestMemory_ConcurrentStrReplaceSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "brain.db")
	open := func() store.Store {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	testConcurrentStrReplace(t, open(), open())
}

func TestMemory_ConcurrentStrReplacePostgres(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	open := func() store.Store {
		st, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	testConcurrentStrReplace(t, open(), open())
}
