package storetest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

func connection(id, person, provider string) store.Connection {
	return store.Connection{
		ID: id, PersonID: person, Provider: provider, Account: person + "@upstream",
		AccessToken: "at-1-" + id, RefreshToken: "rt-1-" + id, Scope: "read",
		ExpiresAt: T0.Add(8 * time.Hour).UTC(), Status: store.ConnectionConnected,
		CreatedAt: T0.UTC(), UpdatedAt: T0.UTC(),
	}
}

func testConnections(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	if _, err := other.Connection(ctx, "alice", "mcp:linear"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Connection before any = %v, want ErrNotFound", err)
	}
	a := connection("c1", "alice", "mcp:linear")
	b := connection("c2", "bob", "mcp:linear")
	ws := connection("c3", "", "mcp:linear")
	ws.ServiceAccount, ws.ExpiresAt = true, time.Time{}
	for _, c := range []store.Connection{a, b, ws} {
		if err := st.SaveConnection(ctx, c); err != nil {
			t.Fatalf("SaveConnection(%s): %v", c.ID, err)
		}
	}
	if err := st.SaveConnection(ctx, store.Connection{ID: "x", UpdatedAt: T0}); !errors.Is(err, engine.ErrInvariant) {
		t.Errorf("SaveConnection without a provider = %v, want ErrInvariant", err)
	}
	got, err := other.Connection(ctx, "alice", "mcp:linear")
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("Connection = %+v, %v; want %+v", got, err, a)
	}
	if got, _ := other.ConnectionByID(ctx, "c3"); !reflect.DeepEqual(got, ws) {
		t.Errorf("workspace connection = %+v, want %+v", got, ws)
	}
	mine, _ := other.ConnectionsOf(ctx, "bob", false)
	every, _ := other.ConnectionsOf(ctx, "", true)
	if len(mine) != 1 || mine[0].ID != "c2" || len(every) != 3 {
		t.Errorf("ConnectionsOf(bob) = %d, all = %d", len(mine), len(every))
	}

	// Rotation is a compare-and-swap on the refresh token.
	next := a
	next.AccessToken, next.RefreshToken, next.Scope, next.UpdatedAt = "at-2", "rt-2", "", T0.Add(time.Hour).UTC()
	if ok, err := other.RotateConnection(ctx, "c1", "rt-stale", next); ok || err != nil {
		t.Fatalf("RotateConnection(stale) = %v, %v", ok, err)
	}
	if ok, err := other.RotateConnection(ctx, "c1", a.RefreshToken, next); !ok || err != nil {
		t.Fatalf("RotateConnection = %v, %v", ok, err)
	}
	got, _ = st.ConnectionByID(ctx, "c1")
	if got.AccessToken != "at-2" || got.RefreshToken != "rt-2" || got.Scope != "read" || !got.UpdatedAt.Equal(next.UpdatedAt) {
		t.Errorf("after rotation = %+v", got)
	}

	// Revoking forgets the tokens, once; a new grant reconnects, same id.
	if changed, err := st.RevokeConnection(ctx, T0.Add(2*time.Hour), "c1", "invalid_grant"); !changed || err != nil {
		t.Fatalf("RevokeConnection = %v, %v", changed, err)
	}
	if changed, _ := other.RevokeConnection(ctx, T0.Add(3*time.Hour), "c1", "again"); changed {
		t.Error("a second revocation changed the connection")
	}
	got, _ = other.ConnectionByID(ctx, "c1")
	if got.Status != store.ConnectionRevoked || got.Problem != "invalid_grant" || got.AccessToken != "" || got.RefreshToken != "" {
		t.Errorf("after revoke = %+v", got)
	}
	if ok, _ := st.RotateConnection(ctx, "c1", "", next); ok {
		t.Error("a revoked connection rotated")
	}
	if _, err := st.RevokeConnection(ctx, T0, "nope", "x"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("RevokeConnection(unknown) = %v", err)
	}
	again := connection("c-new", "alice", "mcp:linear")
	if err := st.SaveConnection(ctx, again); err != nil {
		t.Fatal(err)
	}
	got, _ = other.Connection(ctx, "alice", "mcp:linear")
	if got.ID != "c1" || got.Status != store.ConnectionConnected || got.Problem != "" || got.AccessToken != again.AccessToken {
		t.Errorf("after reconnecting = %+v", got)
	}
}

func testConnectionRefreshLease(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	stores := [2]store.Store{open(), open()}
	if _, err := stores[0].ClaimConnectionRefresh(ctx, T0, "nope", T0.Add(time.Minute)); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("ClaimConnectionRefresh(unknown) = %v, want ErrNotFound", err)
	}
	c := connection("c1", "alice", "github")
	if err := stores[0].SaveConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	var (
		wg   sync.WaitGroup
		wins [8]bool
	)
	for i := range wins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := stores[i%2].ClaimConnectionRefresh(ctx, T0, "c1", T0.Add(time.Minute))
			if err != nil {
				t.Errorf("ClaimConnectionRefresh: %v", err)
			}
			wins[i] = ok
		}()
	}
	wg.Wait()
	n := 0
	for _, w := range wins {
		if w {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d claims won the lease, want 1", n)
	}
	if ok, _ := stores[1].ClaimConnectionRefresh(ctx, T0.Add(time.Minute), "c1", T0.Add(2*time.Minute)); !ok {
		t.Error("could not take over an expired lease")
	}
	next := c
	next.RefreshToken, next.UpdatedAt = "rt-2", T0.Add(time.Minute)
	if ok, err := stores[1].RotateConnection(ctx, "c1", c.RefreshToken, next); !ok || err != nil {
		t.Fatalf("RotateConnection = %v, %v", ok, err)
	}
	if ok, _ := stores[0].ClaimConnectionRefresh(ctx, T0.Add(time.Minute), "c1", T0.Add(2*time.Minute)); !ok {
		t.Error("the lease was not released by the rotation")
	}
}

func testOAuthClientsAndConnectFlows(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	if _, err := other.OAuthClient(ctx, "https://as.example"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("OAuthClient before any = %v", err)
	}
	cl := store.OAuthClient{Issuer: "https://as.example", ClientID: "cid", ClientSecret: "csecret", CreatedAt: T0.UTC()}
	if err := st.SaveOAuthClient(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if got, err := other.OAuthClient(ctx, cl.Issuer); err != nil || !reflect.DeepEqual(got, cl) {
		t.Errorf("OAuthClient = %+v, %v", got, err)
	}
	f := store.ConnectFlow{State: "st1", PersonID: "alice", Provider: "mcp:linear", Verifier: "v-secret",
		Detail: []byte(`{"thread":"slack:T/C/1"}`), ExpiresAt: T0.Add(10 * time.Minute).UTC(), CreatedAt: T0.UTC()}
	if err := st.SaveConnectFlow(ctx, T0, f); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveConnectFlow(ctx, T0, store.ConnectFlow{State: "old", Provider: "p", ExpiresAt: T0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := other.ConsumeConnectFlow(ctx, T0.Add(time.Minute), "old"); ok {
		t.Error("an expired flow was consumed")
	}
	got, ok, err := other.ConsumeConnectFlow(ctx, T0.Add(time.Minute), "st1")
	if err != nil || !ok || !reflect.DeepEqual(got, f) {
		t.Fatalf("ConsumeConnectFlow = %+v, %v, %v; want %+v", got, ok, err, f)
	}
	if _, ok, _ := st.ConsumeConnectFlow(ctx, T0.Add(time.Minute), "st1"); ok {
		t.Error("a flow was consumed twice")
	}
}
