package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// testCodeChannels: a session's code channel is found by session and by
// (team, channel); a retry writes the same row again; a later state
// replaces the earlier; a refused workspace's row (no channel) is found by
// session only; a channel already taken by another session is a conflict
// that leaves the first mapping alone.
func testCodeChannels(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	if _, ok, err := st.CodeChannel(ctx, "s1"); ok || err != nil {
		t.Fatalf("CodeChannel before one is set = %v, %v; want none", ok, err)
	}
	c := store.CodeChannel{SessionID: "s1", Team: "T1", Channel: "C1", Origin: "slack:T1:C0:1.1", State: store.CodeChannelOpen, Context: "[]"}
	for range 2 { // a retry after a crash writes the same row
		if err := st.SetCodeChannel(ctx, T0, c); err != nil {
			t.Fatalf("SetCodeChannel: %v", err)
		}
	}
	got, ok, err := st.CodeChannel(ctx, "s1")
	if err != nil || !ok {
		t.Fatalf("CodeChannel = %v, %v", ok, err)
	}
	if !got.UpdatedAt.Equal(T0) {
		t.Errorf("UpdatedAt = %v, want %v", got.UpdatedAt, T0)
	}
	got.UpdatedAt = time.Time{}
	if got != c {
		t.Errorf("CodeChannel = %+v, want %+v", got, c)
	}
	if got, ok, err := st.CodeChannelAt(ctx, "T1", "C1"); err != nil || !ok || got.SessionID != "s1" {
		t.Errorf("CodeChannelAt(T1, C1) = %+v, %v, %v; want session s1", got, ok, err)
	}
	for _, other := range [][2]string{{"T2", "C1"}, {"T1", "C2"}, {"T1", ""}} {
		if _, ok, err := st.CodeChannelAt(ctx, other[0], other[1]); ok || err != nil {
			t.Errorf("CodeChannelAt(%q, %q) = %v, %v; want none", other[0], other[1], ok, err)
		}
	}

	c.State, c.Context = store.CodeChannelArchived, `[{"key":"repo"}]`
	if err := st.SetCodeChannel(ctx, T0.Add(time.Minute), c); err != nil {
		t.Fatalf("SetCodeChannel (archived): %v", err)
	}
	if got, _, _ := st.CodeChannel(ctx, "s1"); got.State != store.CodeChannelArchived || got.Context != c.Context {
		t.Errorf("after update: %+v, want state archived and the new context", got)
	}

	// Two sessions without a channel (refused workspaces) do not collide.
	for _, id := range []string{"s2", "s3"} {
		if err := st.SetCodeChannel(ctx, T0, store.CodeChannel{SessionID: id, Team: "T1", Origin: "slack:T1:C0:" + id, State: store.CodeChannelUnavailable}); err != nil {
			t.Fatalf("SetCodeChannel(%s unavailable): %v", id, err)
		}
	}
	if got, ok, _ := st.CodeChannel(ctx, "s3"); !ok || got.State != store.CodeChannelUnavailable || got.Channel != "" {
		t.Errorf("unavailable row = %+v, %v", got, ok)
	}

	err = st.SetCodeChannel(ctx, T0, store.CodeChannel{SessionID: "s4", Team: "T1", Channel: "C1", State: store.CodeChannelOpen})
	if !errors.Is(err, engine.ErrConflict) {
		t.Errorf("a channel of another session: err = %v, want ErrConflict", err)
	}
	if got, _, _ := open().CodeChannelAt(ctx, "T1", "C1"); got.SessionID != "s1" {
		t.Errorf("after the conflict, C1 belongs to %q, want s1", got.SessionID)
	}
	if err := st.SetCodeChannel(ctx, T0, store.CodeChannel{}); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("no session: err = %v, want ErrInvalid", err)
	}
}

// testCodeChannelsPruned: retention takes a pruned session's code channel
// with it, so its channel no longer routes; a kept session's stays.
func testCodeChannelsPruned(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	retentionFixture(t, st, map[string]time.Time{"old": T0, "new": T0.Add(48 * time.Hour)}, 1)
	for i, id := range []string{"old", "new"} {
		c := store.CodeChannel{SessionID: id, Team: "T", Channel: "C" + string(rune('1'+i)), Origin: "slack:T:C:" + id, State: store.CodeChannelOpen}
		if err := st.SetCodeChannel(ctx, T0, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.PruneSessions(ctx, T0.Add(24*time.Hour), 100); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.CodeChannelAt(ctx, "T", "C1"); ok || err != nil {
		t.Errorf("the pruned session's channel = %v, %v; want gone", ok, err)
	}
	if c, ok, err := st.CodeChannel(ctx, "new"); !ok || err != nil || c.Channel != "C2" {
		t.Errorf("the kept session's channel = %+v, %v, %v", c, ok, err)
	}
}
