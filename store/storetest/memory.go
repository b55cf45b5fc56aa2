package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

func memCommit(scope, by string, at time.Time, ws ...store.MemoryWrite) store.MemoryCommit {
	return store.MemoryCommit{Scope: scope, Now: at, By: by, SessionID: "ses-" + by, Writes: ws}
}

func testMemoryRoundTrip(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	const scope = "channel:slack:T1:C1"
	if _, err := other.MemoryFile(ctx, scope, "a.md"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("MemoryFile before any write = %v, want ErrNotFound", err)
	}
	if err := st.CommitMemory(ctx, memCommit(scope, "alice", T0,
		store.MemoryWrite{Path: "a.md", Content: "héllo\n", Op: "create", Diff: "+héllo"},
		store.MemoryWrite{Path: "dir/b.md", Content: "b", Op: "create"})); err != nil {
		t.Fatal(err)
	}
	got, err := other.MemoryFile(ctx, scope, "a.md")
	if err != nil || got.Content != "héllo\n" || got.Size != int64(len("héllo\n")) || got.Version != 1 ||
		!got.UpdatedAt.Equal(T0) || got.UpdatedBy != "alice" || got.SessionID != "ses-alice" || got.Scope != scope {
		t.Fatalf("MemoryFile = %+v, %v", got, err)
	}
	// An edit names the version it read; a stale one changes nothing.
	if err := other.CommitMemory(ctx, memCommit(scope, "bob", T0.Add(time.Second),
		store.MemoryWrite{Path: "a.md", Expect: 1, Content: "hello bob\n", Op: "str_replace"})); err != nil {
		t.Fatal(err)
	}
	err = st.CommitMemory(ctx, memCommit(scope, "carol", T0.Add(2*time.Second),
		store.MemoryWrite{Path: "a.md", Expect: 1, Content: "lost", Op: "str_replace"}))
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("stale write = %v, want ErrConflict", err)
	}
	err = st.CommitMemory(ctx, memCommit(scope, "carol", T0, store.MemoryWrite{Path: "a.md", Content: "again", Op: "create"}))
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("create over an existing file = %v, want ErrConflict", err)
	}
	if got, _ := st.MemoryFile(ctx, scope, "a.md"); got.Content != "hello bob\n" || got.Version != 2 || got.UpdatedBy != "bob" {
		t.Fatalf("after edit = %+v", got)
	}
	files, err := other.MemoryFiles(ctx, scope)
	if err != nil || len(files) != 2 || files[0].Path != "a.md" || files[1].Path != "dir/b.md" {
		t.Fatalf("MemoryFiles = %+v, %v", files, err)
	}
	if files, _ := other.MemoryFiles(ctx, "agent:other"); len(files) != 0 {
		t.Fatalf("another scope sees %+v", files)
	}
	scopes, err := other.MemoryScopes(ctx)
	if err != nil || len(scopes) != 1 || scopes[0] != (store.MemoryScope{Scope: scope, Files: 2, Bytes: int64(len("hello bob\n") + 1)}) {
		t.Fatalf("MemoryScopes = %+v, %v", scopes, err)
	}
	// Rename is a delete and a create in one commit; its destination
	// existing refuses the whole commit.
	err = st.CommitMemory(ctx, memCommit(scope, "dan", T0,
		store.MemoryWrite{Path: "dir/b.md", Expect: 1, Delete: true, Op: "rename"},
		store.MemoryWrite{Path: "a.md", Content: "b", Op: "rename"}))
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("rename onto an existing file = %v, want ErrConflict", err)
	}
	if _, err := st.MemoryFile(ctx, scope, "dir/b.md"); err != nil {
		t.Fatalf("a refused rename deleted its source: %v", err)
	}
	if err := st.CommitMemory(ctx, memCommit(scope, "dan", T0.Add(3*time.Second),
		store.MemoryWrite{Path: "a.md", Expect: 2, Delete: true, Op: "delete", Diff: "-hello bob"},
		store.MemoryWrite{Path: "dir/b.md", Expect: 1, Delete: true, Op: "delete"})); err != nil {
		t.Fatal(err)
	}
	if scopes, _ := other.MemoryScopes(ctx); len(scopes) != 0 {
		t.Fatalf("MemoryScopes after deleting everything = %+v", scopes)
	}
	hist, err := other.MemoryHistory(ctx, scope, "a.md", 0)
	if err != nil || len(hist) != 3 {
		t.Fatalf("MemoryHistory = %+v, %v; want 3 changes", hist, err)
	}
	if h := hist[0]; h.Op != "delete" || h.Version != 0 || h.By != "dan" || h.Diff != "-hello bob" || !h.At.Equal(T0.Add(3*time.Second)) {
		t.Errorf("newest change = %+v", h)
	}
	if h := hist[2]; h.Op != "create" || h.Version != 1 || h.By != "alice" || h.SessionID != "ses-alice" || h.Diff != "+héllo" {
		t.Errorf("oldest change = %+v", h)
	}
	if all, _ := other.MemoryHistory(ctx, scope, "", 2); len(all) != 2 || all[0].Path != "dir/b.md" {
		t.Errorf("scope history (limit 2) = %+v", all)
	}
}

func testMemoryLimits(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	const scope = "agent:default"
	limited := func(c store.MemoryCommit) store.MemoryCommit { c.MaxFiles, c.MaxBytes = 2, 10; return c }
	if err := st.CommitMemory(ctx, limited(memCommit(scope, "a", T0,
		store.MemoryWrite{Path: "1", Content: "12345", Op: "create"},
		store.MemoryWrite{Path: "2", Content: "12345", Op: "create"}))); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]store.MemoryCommit{
		"a third file": memCommit(scope, "a", T0, store.MemoryWrite{Path: "3", Op: "create"}),
		"an 11th byte": memCommit(scope, "a", T0, store.MemoryWrite{Path: "1", Expect: 1, Content: "123456", Op: "insert"}),
	} {
		err := st.CommitMemory(ctx, limited(c))
		if engine.CodeOf(err) != engine.CodeTooLarge || !strings.Contains(err.Error(), "limit") {
			t.Errorf("%s: %v, want too_large naming the limit", name, err)
		}
	}
	if sc, _ := st.MemoryScopes(ctx); len(sc) != 1 || sc[0].Files != 2 || sc[0].Bytes != 10 {
		t.Fatalf("a refused commit changed the totals: %+v", sc)
	}
	if _, err := st.MemoryFile(ctx, scope, "3"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("a refused commit wrote a file: %v", err)
	}
	// Lowered limits: a commit that shrinks the scope still passes.
	c := memCommit(scope, "a", T0, store.MemoryWrite{Path: "1", Expect: 1, Content: "1", Op: "str_replace"})
	c.MaxFiles, c.MaxBytes = 1, 2
	if err := st.CommitMemory(ctx, c); err != nil {
		t.Fatalf("shrinking an oversized scope: %v", err)
	}
}

func testMemoryRejects(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	w := store.MemoryWrite{Path: "a", Op: "create"}
	for name, c := range map[string]store.MemoryCommit{
		"no scope":        memCommit("", "a", T0, w),
		"no time":         memCommit("s", "a", time.Time{}, w),
		"no writes":       memCommit("s", "a", T0),
		"no path":         memCommit("s", "a", T0, store.MemoryWrite{}),
		"blind delete":    memCommit("s", "a", T0, store.MemoryWrite{Path: "a", Delete: true}),
		"a path twice":    memCommit("s", "a", T0, w, w),
		"a negative want": memCommit("s", "a", T0, store.MemoryWrite{Path: "a", Expect: -1}),
	} {
		if err := st.CommitMemory(ctx, c); !errors.Is(err, engine.ErrInvariant) {
			t.Errorf("%s: %v, want ErrInvariant", name, err)
		}
	}
}

// Two processes edit one file from the version both read: exactly one
// wins, the other is told of the conflict, and no update is lost.
func testMemoryConcurrentEdits(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	a, b := open(), open()
	const scope = "channel:github:acme/api"
	if err := a.CommitMemory(ctx, memCommit(scope, "x", T0, store.MemoryWrite{Path: "f", Content: "v1", Op: "create"})); err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		cur, err := a.MemoryFile(ctx, scope, "f")
		if err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, st := range []store.Store{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = st.CommitMemory(ctx, memCommit(scope, fmt.Sprint(i), T0,
					store.MemoryWrite{Path: "f", Expect: cur.Version, Content: fmt.Sprintf("round %d by %d", round, i), Op: "str_replace"}))
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won < 0:
				won = i
			case err == nil:
				t.Fatalf("round %d: both writes from version %d passed", round, cur.Version)
			case !errors.Is(err, engine.ErrConflict):
				t.Fatalf("round %d: %v, want ErrConflict", round, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: neither write passed: %v", round, errs)
		}
		got, _ := b.MemoryFile(ctx, scope, "f")
		if want := fmt.Sprintf("round %d by %d", round, won); got.Content != want || got.Version != cur.Version+1 {
			t.Fatalf("round %d: file = %q v%d, want %q v%d", round, got.Content, got.Version, want, cur.Version+1)
		}
	}
	if hist, _ := a.MemoryHistory(ctx, scope, "f", 0); len(hist) != 21 {
		t.Errorf("history has %d changes, want the create and one per round", len(hist))
	}
}
