package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// testConnectionServiceAccount: an admin's mark survives refreshes and
// reads from another handle, changes once, and a new grant clears it.
func testConnectionServiceAccount(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	c := connection("c1", "bob", "http:tickets")
	if err := st.SaveConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := st.MarkServiceAccount(ctx, T0, "nope", true); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("MarkServiceAccount(unknown) = %v, want ErrNotFound", err)
	}
	at := T0.Add(time.Minute).UTC()
	if changed, err := st.MarkServiceAccount(ctx, at, "c1", true); !changed || err != nil {
		t.Fatalf("MarkServiceAccount(true) = %v, %v", changed, err)
	}
	if changed, err := other.MarkServiceAccount(ctx, at, "c1", true); changed || err != nil {
		t.Errorf("marking a marked connection = %v, %v; want unchanged", changed, err)
	}
	got, err := other.ConnectionByID(ctx, "c1")
	if err != nil || !got.ServiceAccount || !got.UpdatedAt.Equal(at) || got.AccessToken != c.AccessToken {
		t.Fatalf("after marking = %+v, %v", got, err)
	}
	// A refresh keeps the mark.
	next := c
	next.AccessToken, next.RefreshToken, next.UpdatedAt = "at-2", "rt-2", T0.Add(2*time.Minute).UTC()
	if ok, err := other.RotateConnection(ctx, "c1", c.RefreshToken, next); !ok || err != nil {
		t.Fatalf("RotateConnection = %v, %v", ok, err)
	}
	if got, _ := st.ConnectionByID(ctx, "c1"); !got.ServiceAccount {
		t.Error("a refresh cleared the service-account mark")
	}
	if changed, err := other.MarkServiceAccount(ctx, at, "c1", false); !changed || err != nil {
		t.Fatalf("MarkServiceAccount(false) = %v, %v", changed, err)
	}
	if got, _ := st.ConnectionByID(ctx, "c1"); got.ServiceAccount {
		t.Error("the mark is still set after clearing it")
	}
	// A new grant replaces the one the admin vouched for: the mark goes.
	if _, err := st.MarkServiceAccount(ctx, at, "c1", true); err != nil {
		t.Fatal(err)
	}
	if err := other.SaveConnection(ctx, connection("c-new", "bob", "http:tickets")); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Connection(ctx, "bob", "http:tickets"); got.ID != "c1" || got.ServiceAccount {
		t.Errorf("after a new grant = %+v; want id c1 without the mark", got)
	}
}
