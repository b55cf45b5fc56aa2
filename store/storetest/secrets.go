package storetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"brain/internal/keyring"
	"brain/store"
)

func ring(t *testing.T, keys ...string) *keyring.Ring {
	t.Helper()
	r, err := keyring.Parse(strings.Join(keys, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newKey(t *testing.T) string {
	t.Helper()
	k, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testSecretsSealed: credentials written through the sealed views are
// stored sealed, read back plain by another process, and the start-up
// check refuses no key or a wrong one.
func testSecretsSealed(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	k1 := newKey(t)
	r1 := ring(t, k1)
	lin := store.SealedLinearTokens(st, r1)
	conns := store.SealedConnections(st, r1)
	tok := linearToken("org-a")
	if err := lin.SaveLinearToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	c := connection("c1", "alice", "mcp:linear")
	if err := conns.SaveConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := conns.SaveOAuthClient(ctx, store.OAuthClient{Issuer: "https://as", ClientID: "id", ClientSecret: "cs-plain", CreatedAt: T0}); err != nil {
		t.Fatal(err)
	}
	if err := conns.SaveConnectFlow(ctx, T0, store.ConnectFlow{State: "s", Provider: "p", Verifier: "pkce-plain", ExpiresAt: T0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	plain := []string{tok.AccessToken, tok.RefreshToken, c.AccessToken, c.RefreshToken, "cs-plain", "pkce-plain"}
	vals, err := other.SecretValues(ctx)
	if err != nil || len(vals) != len(plain) {
		t.Fatalf("SecretValues = %d values, %v; want %d", len(vals), err, len(plain))
	}
	for _, v := range vals {
		id, _, sealed, _ := keyring.Split(v.Stored)
		if !sealed || id != r1.Current() {
			t.Errorf("%s stored unsealed or under %q", v.Context(), id)
		}
		for _, p := range plain {
			if strings.Contains(v.Stored, p) {
				t.Errorf("%s holds %q in plain text", v.Context(), p)
			}
		}
	}
	// The driver alone sees sealed text; the sealed view opens it.
	if raw, _ := other.LinearToken(ctx, "org-a"); raw.AccessToken == tok.AccessToken {
		t.Error("the driver returned the access token in plain text")
	}
	if got, err := store.SealedLinearTokens(other, r1).LinearToken(ctx, "org-a"); err != nil || got.AccessToken != tok.AccessToken {
		t.Errorf("sealed view LinearToken = %q, %v", got.AccessToken, err)
	}
	if got, err := store.SealedConnections(other, r1).ConnectionByID(ctx, "c1"); err != nil || got.RefreshToken != c.RefreshToken {
		t.Errorf("sealed view connection = %q, %v", got.RefreshToken, err)
	}

	// Start-up: the right key passes; none or another refuses, naming
	// the key, and writes nothing.
	if err := store.CheckSecrets(ctx, other, r1); err != nil {
		t.Errorf("CheckSecrets(right key) = %v", err)
	}
	for name, r := range map[string]*keyring.Ring{"no key": nil, "wrong key": ring(t, newKey(t))} {
		err := store.CheckSecrets(ctx, other, r)
		if !errors.Is(err, store.ErrSecretsKey) || !strings.Contains(err.Error(), r1.Current()) {
			t.Errorf("CheckSecrets(%s) = %v; want ErrSecretsKey naming %s", name, err, r1.Current())
		}
	}
	after, _ := other.SecretValues(ctx)
	for i := range after {
		if after[i] != vals[i] {
			t.Errorf("the check changed %s", after[i].Context())
		}
	}

	// Rotation: a ring with a new current key re-seals everything; the old
	// key may then go.
	k2 := newKey(t)
	r2 := ring(t, k2, k1)
	rep, err := store.Reseal(ctx, other, r2)
	if err != nil || rep.Rotated != len(plain) || rep.Sealed != 0 {
		t.Fatalf("Reseal = %+v, %v", rep, err)
	}
	only2 := ring(t, k2)
	if err := store.CheckSecrets(ctx, st, only2); err != nil {
		t.Errorf("after rotation, the new key alone: %v", err)
	}
	if got, err := store.SealedLinearTokens(st, only2).LinearToken(ctx, "org-a"); err != nil || got.RefreshToken != tok.RefreshToken {
		t.Errorf("after rotation = %q, %v", got.RefreshToken, err)
	}
	if rep, _ := store.Reseal(ctx, st, only2); rep.Current != len(plain) || rep.Rotated != 0 {
		t.Errorf("a second Reseal = %+v, want all current", rep)
	}
}

// testSecretsPlainMigrated: tokens stored before a key was set are sealed
// by Reseal, and a value changed meanwhile is left alone.
func testSecretsPlainMigrated(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	tok := linearToken("org-a")
	if err := st.SaveLinearToken(ctx, tok); err != nil { // no key: plain
		t.Fatal(err)
	}
	if err := store.CheckSecrets(ctx, st, nil); err != nil {
		t.Fatalf("plain values without a key: %v", err)
	}
	r := ring(t, newKey(t))
	// The sealed view reads plain values stored before a key.
	if got, err := store.SealedLinearTokens(st, r).LinearToken(ctx, "org-a"); err != nil || got.AccessToken != tok.AccessToken {
		t.Fatalf("sealed view of a plain value = %q, %v", got.AccessToken, err)
	}
	vals, _ := st.SecretValues(ctx)
	if ok, err := st.ReplaceSecret(ctx, vals[0], "changed"); !ok || err != nil {
		t.Fatalf("ReplaceSecret = %v, %v", ok, err)
	}
	if ok, _ := st.ReplaceSecret(ctx, vals[0], "again"); ok {
		t.Error("ReplaceSecret swapped a value that changed")
	}
	bad := vals[0]
	bad.Table = "sessions"
	if _, err := st.ReplaceSecret(ctx, bad, "x"); err == nil {
		t.Error("ReplaceSecret accepted a table that holds no secrets")
	}
	rep, err := store.Reseal(ctx, st, r)
	if err != nil || rep.Sealed != 2 {
		t.Fatalf("Reseal = %+v, %v; want 2 sealed", rep, err)
	}
	vals, _ = st.SecretValues(ctx)
	for _, v := range vals {
		if _, _, sealed, _ := keyring.Split(v.Stored); !sealed {
			t.Errorf("%s still plain after Reseal", v.Context())
		}
	}
}

// testSecretsSealedRotationRace: two processes refresh one sealed
// connection from the same refresh token: exactly one rotation wins.
func testSecretsSealedRotationRace(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	r := ring(t, newKey(t))
	views := [2]store.Connections{store.SealedConnections(open(), r), store.SealedConnections(open(), r)}
	c := connection("c1", "alice", "github")
	if err := views[0].SaveConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	var (
		wg   sync.WaitGroup
		wins [6]bool
	)
	for i := range wins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := c
			next.AccessToken, next.RefreshToken, next.UpdatedAt = "at-next", "rt-next", T0.Add(time.Minute)
			ok, err := views[i%2].RotateConnection(ctx, "c1", c.RefreshToken, next)
			if err != nil {
				t.Errorf("RotateConnection: %v", err)
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
		t.Fatalf("%d rotations won, want 1", n)
	}
	lin := [2]store.LinearTokens{store.SealedLinearTokens(open(), r), store.SealedLinearTokens(open(), r)}
	tok := linearToken("org-a")
	if err := lin[0].SaveLinearToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	next := tok
	next.RefreshToken, next.UpdatedAt = "rt-2", T0.Add(time.Minute)
	if ok, err := lin[1].RotateLinearToken(ctx, "org-a", tok.RefreshToken, next); !ok || err != nil {
		t.Fatalf("sealed RotateLinearToken = %v, %v", ok, err)
	}
	if ok, _ := lin[0].RotateLinearToken(ctx, "org-a", tok.RefreshToken, next); ok {
		t.Error("a second sealed rotation from the same refresh token swapped")
	}
	if err := lin[0].RevokeLinearToken(ctx, T0, "org-a", "rt-2", "refused"); err != nil {
		t.Fatal(err)
	}
	if got, _ := lin[1].LinearToken(ctx, "org-a"); got.Status != store.LinearRevoked {
		t.Errorf("sealed revoke: status %q", got.Status)
	}
}
