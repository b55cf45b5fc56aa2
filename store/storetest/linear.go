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

func linearToken(org string) store.LinearToken {
	return store.LinearToken{
		OrganizationID: org, OrganizationName: "Acme " + org, URLKey: "acme-" + org, AppUserID: "app-" + org,
		AccessToken: "at-1-" + org, RefreshToken: "rt-1-" + org, ExpiresAt: T0.Add(24 * time.Hour).UTC(),
		Scope: "read,write", Status: store.LinearConnected, UpdatedAt: T0.UTC(),
	}
}

func testLinearTokens(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	if _, err := other.LinearToken(ctx, "org-a"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("LinearToken before any install = %v, want ErrNotFound", err)
	}
	a, b := linearToken("org-a"), linearToken("org-b")
	b.ExpiresAt = time.Time{} // a token Linear gave no expiry
	for _, tok := range []store.LinearToken{b, a} {
		if err := st.SaveLinearToken(ctx, tok); err != nil {
			t.Fatalf("SaveLinearToken(%s): %v", tok.OrganizationID, err)
		}
	}
	got, err := other.LinearToken(ctx, "org-a")
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("LinearToken = %+v, %v; want %+v", got, err, a)
	}
	all, err := other.LinearTokens(ctx)
	if err != nil || len(all) != 2 || all[0].OrganizationID != "org-a" || !reflect.DeepEqual(all[1], b) {
		t.Fatalf("LinearTokens = %+v, %v; want org-a then %+v", all, err, b)
	}
	if err := st.SaveLinearToken(ctx, store.LinearToken{UpdatedAt: T0}); err == nil {
		t.Error("SaveLinearToken without an organization id succeeded")
	}

	// A rotation with a stale refresh token writes nothing.
	next := a
	next.AccessToken, next.RefreshToken, next.ExpiresAt, next.UpdatedAt = "at-2", "rt-2", T0.Add(48*time.Hour).UTC(), T0.Add(time.Hour).UTC()
	if ok, err := other.RotateLinearToken(ctx, "org-a", "rt-stale", next); err != nil || ok {
		t.Fatalf("RotateLinearToken(stale) = %v, %v; want false", ok, err)
	}
	if ok, err := other.RotateLinearToken(ctx, "org-a", a.RefreshToken, next); err != nil || !ok {
		t.Fatalf("RotateLinearToken = %v, %v; want true", ok, err)
	}
	if ok, _ := st.RotateLinearToken(ctx, "org-a", a.RefreshToken, next); ok {
		t.Error("a second rotation from the same refresh token swapped")
	}
	if got, _ := st.LinearToken(ctx, "org-a"); !reflect.DeepEqual(got, next) {
		t.Errorf("after rotation = %+v, want %+v", got, next)
	}

	// Revoking needs the current refresh token; a reinstall clears it.
	if err := st.RevokeLinearToken(ctx, T0, "org-a", "rt-old", "refused"); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.LinearToken(ctx, "org-a"); got.Status != store.LinearConnected {
		t.Errorf("revoke with an old refresh token changed status to %q", got.Status)
	}
	if err := st.RevokeLinearToken(ctx, T0.Add(2*time.Hour), "org-a", "rt-2", "invalid_grant"); err != nil {
		t.Fatal(err)
	}
	got, _ = other.LinearToken(ctx, "org-a")
	if got.Status != store.LinearRevoked || got.Problem != "invalid_grant" || !got.UpdatedAt.Equal(T0.Add(2*time.Hour)) {
		t.Errorf("after revoke = %+v", got)
	}
	if err := st.SaveLinearToken(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, _ := other.LinearToken(ctx, "org-a"); got.Status != store.LinearConnected || got.Problem != "" {
		t.Errorf("after reinstall = %+v, want connected", got)
	}
}

func testLinearRefreshLease(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	stores := [2]store.Store{open(), open()}
	if _, err := stores[0].ClaimLinearRefresh(ctx, T0, "nobody", T0.Add(time.Minute)); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("ClaimLinearRefresh(unknown) = %v, want ErrNotFound", err)
	}
	tok := linearToken("org-a")
	if err := stores[0].SaveLinearToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	// Two processes claim at once: exactly one wins.
	var (
		wg   sync.WaitGroup
		wins [8]bool
	)
	for i := range wins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := stores[i%2].ClaimLinearRefresh(ctx, T0, "org-a", T0.Add(time.Minute))
			if err != nil {
				t.Errorf("ClaimLinearRefresh: %v", err)
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
	// An expired lease may be taken over; a rotation releases it.
	if ok, _ := stores[1].ClaimLinearRefresh(ctx, T0.Add(30*time.Second), "org-a", T0.Add(2*time.Minute)); ok {
		t.Error("claimed a lease still held")
	}
	if ok, _ := stores[1].ClaimLinearRefresh(ctx, T0.Add(time.Minute), "org-a", T0.Add(2*time.Minute)); !ok {
		t.Error("could not take over an expired lease")
	}
	next := tok
	next.RefreshToken, next.UpdatedAt = "rt-2", T0.Add(time.Minute)
	if ok, err := stores[1].RotateLinearToken(ctx, "org-a", tok.RefreshToken, next); !ok || err != nil {
		t.Fatalf("RotateLinearToken = %v, %v", ok, err)
	}
	if ok, _ := stores[0].ClaimLinearRefresh(ctx, T0.Add(time.Minute), "org-a", T0.Add(2*time.Minute)); !ok {
		t.Error("the lease was not released by the rotation")
	}
}

func testOAuthStates(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	if err := st.SaveOAuthState(ctx, T0, "s1", T0.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveOAuthState(ctx, T0, "s2", T0.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ok, err := other.ConsumeOAuthState(ctx, T0.Add(time.Minute), "unknown"); ok || err != nil {
		t.Errorf("ConsumeOAuthState(unknown) = %v, %v", ok, err)
	}
	if ok, err := other.ConsumeOAuthState(ctx, T0.Add(time.Minute), "s1"); !ok || err != nil {
		t.Errorf("ConsumeOAuthState(s1) = %v, %v; want true", ok, err)
	}
	if ok, _ := st.ConsumeOAuthState(ctx, T0.Add(time.Minute), "s1"); ok {
		t.Error("a state was accepted twice")
	}
	if ok, _ := st.ConsumeOAuthState(ctx, T0.Add(10*time.Minute), "s2"); ok {
		t.Error("an expired state was accepted")
	}
}

func testLinearSessionOrganizations(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	if _, ok, err := other.LinearSessionOrganization(ctx, "as-1"); ok || err != nil {
		t.Errorf("LinearSessionOrganization before any = %v, %v", ok, err)
	}
	for _, org := range []string{"org-a", "org-b"} {
		if err := st.SetLinearSessionOrganization(ctx, T0, "as-1", org); err != nil {
			t.Fatal(err)
		}
	}
	if org, ok, err := other.LinearSessionOrganization(ctx, "as-1"); org != "org-b" || !ok || err != nil {
		t.Errorf("LinearSessionOrganization = %q, %v, %v; want org-b", org, ok, err)
	}

	// The team: kept beside the workspace, each set without
	// clearing the other, in either order.
	if _, ok, err := other.LinearSessionTeam(ctx, "as-1"); ok || err != nil {
		t.Errorf("LinearSessionTeam before any = %v, %v", ok, err)
	}
	if err := st.SetLinearSessionTeam(ctx, T0, "as-1", "team-1"); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLinearSessionOrganization(ctx, T0, "as-1", "org-c"); err != nil {
		t.Fatal(err)
	}
	if team, ok, err := other.LinearSessionTeam(ctx, "as-1"); team != "team-1" || !ok || err != nil {
		t.Errorf("LinearSessionTeam = %q, %v, %v; want team-1", team, ok, err)
	}
	if org, _, _ := other.LinearSessionOrganization(ctx, "as-1"); org != "org-c" {
		t.Errorf("the team's write changed the workspace: %q", org)
	}
	if err := st.SetLinearSessionTeam(ctx, T0, "as-2", "team-2"); err != nil {
		t.Fatal(err)
	}
	if team, ok, _ := other.LinearSessionTeam(ctx, "as-2"); team != "team-2" || !ok {
		t.Errorf("a team before the workspace: %q, %v", team, ok)
	}
	if org, ok, err := other.LinearSessionOrganization(ctx, "as-2"); ok || err != nil {
		t.Errorf("a workspace for a session only its team was recorded for: %q, %v, %v", org, ok, err)
	}
}

func testLinearParkedInbound(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	for i, org := range []string{"org-a", "org-b", "org-a"} {
		it := store.Inbound{ThreadKey: "linear:s" + string(rune('1'+i)), Kind: "created", Payload: []byte(`{"n":` + string(rune('1'+i)) + `}`)}
		if err := st.ParkLinearInbound(ctx, T0.Add(time.Duration(i)*time.Second), org, it); err != nil {
			t.Fatalf("ParkLinearInbound: %v", err)
		}
	}
	got, err := other.ParkedLinearInbound(ctx, "org-a")
	if err != nil || len(got) != 2 {
		t.Fatalf("ParkedLinearInbound = %d items, %v; want 2", len(got), err)
	}
	if got[0].ThreadKey != "linear:s1" || string(got[0].Payload) != `{"n":1}` || got[0].Kind != "created" ||
		got[1].ThreadKey != "linear:s3" || !got[1].CreatedAt.Equal(T0.Add(2*time.Second)) {
		t.Errorf("parked items = %+v", got)
	}
	if err := st.UnparkLinearInbound(ctx, got[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := st.UnparkLinearInbound(ctx, got[0].ID); err != nil {
		t.Errorf("unparking twice: %v", err)
	}
	if got, _ := other.ParkedLinearInbound(ctx, "org-a"); len(got) != 1 || got[0].ThreadKey != "linear:s3" {
		t.Errorf("after unpark = %+v", got)
	}
	if got, _ := other.ParkedLinearInbound(ctx, "org-b"); len(got) != 1 {
		t.Errorf("org-b parked = %+v", got)
	}
}
