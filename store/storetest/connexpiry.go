package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"brain/store"
)

// testExpiringConnections: the refresh worker's query returns the
// connected connections with a refresh token expiring by a time, soonest
// first, up to a limit; the refresh token's expiry round-trips, and a
// rotation keeps it unless it says a new one.
func testExpiringConnections(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	mk := func(id, person string, expires time.Duration) store.Connection {
		c := connection(id, person, "github")
		c.ExpiresAt = T0.Add(expires).UTC()
		c.RefreshExpiresAt = T0.Add(180 * 24 * time.Hour).UTC()
		return c
	}
	soon, sooner, later := mk("e1", "alice", 3*time.Minute), mk("e2", "bob", time.Minute), mk("e3", "carol", 8*time.Hour)
	never := mk("e4", "dan", 0)
	never.ExpiresAt = time.Time{}
	noRefresh := mk("e5", "erin", time.Minute)
	noRefresh.RefreshToken = ""
	revoked := mk("e6", "frank", time.Minute)
	for _, c := range []store.Connection{soon, sooner, later, never, noRefresh, revoked} {
		if err := st.SaveConnection(ctx, c); err != nil {
			t.Fatalf("SaveConnection(%s): %v", c.ID, err)
		}
	}
	if _, err := st.RevokeConnection(ctx, T0, "e6", "revoked by the person"); err != nil {
		t.Fatal(err)
	}
	ids := func(cs []store.Connection) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	got, err := other.ExpiringConnections(ctx, T0.Add(5*time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids(got), []string{"e2", "e1"}) {
		t.Fatalf("ExpiringConnections(+5m) = %v, want [e2 e1]", ids(got))
	}
	if !reflect.DeepEqual(got[0], sooner) {
		t.Errorf("expiring connection = %+v, want %+v", got[0], sooner)
	}
	if got, _ := other.ExpiringConnections(ctx, T0.Add(5*time.Minute), 1); !reflect.DeepEqual(ids(got), []string{"e2"}) {
		t.Errorf("limit 1 = %v, want [e2]", ids(got))
	}
	if got, _ := other.ExpiringConnections(ctx, T0.Add(9*time.Hour), 10); !reflect.DeepEqual(ids(got), []string{"e2", "e1", "e3"}) {
		t.Errorf("ExpiringConnections(+9h) = %v, want [e2 e1 e3]", ids(got))
	}

	// A rotation that says nothing of the refresh token's expiry keeps
	// it; one that does replaces it.
	next := sooner
	next.AccessToken, next.RefreshToken, next.ExpiresAt, next.RefreshExpiresAt, next.UpdatedAt = "at-2", "rt-2", T0.Add(8*time.Hour).UTC(), time.Time{}, T0.Add(time.Minute).UTC()
	if ok, err := other.RotateConnection(ctx, "e2", sooner.RefreshToken, next); !ok || err != nil {
		t.Fatalf("RotateConnection = %v, %v", ok, err)
	}
	if c, _ := st.ConnectionByID(ctx, "e2"); !c.RefreshExpiresAt.Equal(sooner.RefreshExpiresAt) {
		t.Errorf("refresh expiry after a rotation saying none = %v, want %v", c.RefreshExpiresAt, sooner.RefreshExpiresAt)
	}
	next2 := next
	next2.RefreshToken, next2.RefreshExpiresAt = "rt-3", T0.Add(200*24*time.Hour).UTC()
	if ok, _ := other.RotateConnection(ctx, "e2", "rt-2", next2); !ok {
		t.Fatal("second rotation refused")
	}
	if c, _ := st.ConnectionByID(ctx, "e2"); !c.RefreshExpiresAt.Equal(next2.RefreshExpiresAt) {
		t.Errorf("refresh expiry after a rotation = %v, want %v", c.RefreshExpiresAt, next2.RefreshExpiresAt)
	}
	if got, _ := other.ExpiringConnections(ctx, T0.Add(5*time.Minute), 10); !reflect.DeepEqual(ids(got), []string{"e1"}) {
		t.Errorf("after refreshing e2 = %v, want [e1]", ids(got))
	}
}
