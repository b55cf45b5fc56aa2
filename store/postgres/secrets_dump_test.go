package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"brain/internal/keyring"
	"brain/store"
	"brain/store/postgres/pgtest"
	"brain/store/storetest"
)

// TestStore_NoCredentialInPlainText stores each kind of credential through
// the sealed store on a real PostgreSQL, dumps every table of the schema
// as JSON, and finds none of them in plain text (bot's
// TestSecrets_NoCredentialInPlainTextAndWrongKeyRefused does the same on
// SQLite through the running app).
func TestStore_NoCredentialInPlainText(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	k, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	ring, err := keyring.Parse(k)
	if err != nil {
		t.Fatal(err)
	}
	st := store.Sealed(openAt(t, dsn), ring)
	if _, ok := st.(store.Replicated); !ok {
		t.Fatal("the sealed PostgreSQL store lost the Replicated capability")
	}
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	creds := []string{"lin-access-81f2", "lin-refresh-0c3d", "conn-access-77aa", "conn-refresh-1b2c", "dyn-secret-9e9e", "pkce-verifier-4d4d"}
	if err := st.SaveLinearToken(ctx, store.LinearToken{OrganizationID: "org-a", AccessToken: creds[0], RefreshToken: creds[1], UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.SavePerson(ctx, store.Person{ID: "alice", Name: "Alice", UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveConnection(ctx, store.Connection{ID: "c1", PersonID: "alice", Provider: "github", AccessToken: creds[2], RefreshToken: creds[3], UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveOAuthClient(ctx, store.OAuthClient{Issuer: "https://as", ClientID: "cid", ClientSecret: creds[4], CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveConnectFlow(ctx, now, store.ConnectFlow{State: "s1", PersonID: "alice", Provider: "github", Verifier: creds[5], ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	dump := storetest.DumpPostgres(t, dsn).Rows
	if !strings.Contains(dump, keyring.Prefix+ring.Current()) || !strings.Contains(dump, "connections:") {
		t.Fatalf("the dump lacks the sealed credentials:\n%s", dump)
	}
	for _, c := range creds {
		if strings.Contains(dump, c) {
			t.Errorf("credential %q is stored in plain text", c)
		}
	}
	// The sealed store reads them back.
	if got, err := st.ConnectionByID(ctx, "c1"); err != nil || got.AccessToken != creds[2] {
		t.Errorf("ConnectionByID = %q, %v", got.AccessToken, err)
	}
}
