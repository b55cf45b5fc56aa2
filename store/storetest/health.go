package storetest

import (
	"context"
	"testing"
	"time"

	"brain/store"
)

func testInboxBacklogs(t *testing.T, open func() store.Store) {
	st := open()
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got, err := st.InboxBacklogs(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty inbox: backlogs %+v, %v", got, err)
	}
	for i, src := range []string{"slack", "slack", "linear"} {
		it := store.Inbound{Source: src, ThreadKey: "t", Kind: "message", Payload: []byte(`{}`)}
		if _, err := st.RecordInbound(ctx, t0.Add(time.Duration(i)*time.Minute), []store.Inbound{it}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.InboxBacklogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Source != "linear" || got[0].Depth != 1 || !got[0].Oldest.Equal(t0.Add(2*time.Minute)) ||
		got[1].Source != "slack" || got[1].Depth != 2 || !got[1].Oldest.Equal(t0) {
		t.Fatalf("backlogs %+v", got)
	}
	// Worked items leave the backlog.
	pending, err := st.PendingInbound(ctx, "slack", -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishInbound(ctx, t0.Add(time.Hour), []store.Finished{{ID: pending[0].ID}}); err != nil {
		t.Fatal(err)
	}
	got, err = st.InboxBacklogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Depth != 1 || !got[1].Oldest.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after finishing the oldest slack item: backlogs %+v", got)
	}
}

func testCheckWritable(t *testing.T, open func() store.Store) {
	st := open()
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 2 { // twice: the probe leaves nothing behind to collide with
		if err := st.CheckWritable(ctx, now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatalf("CheckWritable #%d: %v", i+1, err)
		}
	}
	// The probe is not a delivery cursor anyone reads.
	if seq, err := st.DeliveryCursor(ctx, "slack", "probe"); err != nil || seq != 0 {
		t.Fatalf("cursor after probe = %d, %v", seq, err)
	}
}
