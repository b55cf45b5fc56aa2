package bot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/bot/config"
	"brain/internal/keyring"
	"brain/store"
	"brain/store/storetest"
)

// writeKeyFile writes a key file of the given keys (the current first).
func writeKeyFile(t *testing.T, keys ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secrets.key")
	if err := os.WriteFile(path, []byte(strings.Join(keys, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func genKey(t *testing.T) string {
	t.Helper()
	k, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// dumpSQLite returns every value of every table of the database at path,
// one "table: row" line each, and the raw bytes of every file beside it
// (the WAL included).
func dumpSQLite(t *testing.T, path string) (rows string, raw []byte) {
	t.Helper()
	d := storetest.DumpSQLite(t, path)
	return d.Rows, d.Raw
}

// TestSecrets_NoCredentialInPlainTextAndWrongKeyRefused: with a key file,
// a Linear workspace installed through OAuth and a person's connection,
// an OAuth client and a connect flow stored through the app's store, no
// credential appears in any table or in the database's files; a restart
// with another key, or none, refuses to start, says why, and changes
// nothing; with the key it starts and reads the tokens.
func TestSecrets_NoCredentialInPlainTextAndWrongKeyRefused(t *testing.T) {
	key := genKey(t)
	keyFile := writeKeyFile(t, key)
	oa := newOAuthAppWith(t, "secrets:\n  key_file: "+keyFile+"\n")
	oa.install("org-a")
	ctx := context.Background()
	tok := oa.token("org-a")
	if tok.AccessToken == "" || strings.HasPrefix(tok.AccessToken, keyring.Prefix) {
		t.Fatalf("the app's store returned %q, want the plain token", tok.AccessToken)
	}
	now := oa.clock.Now()
	conn := store.Connection{ID: "conn-1", PersonID: "alice", Provider: "mcp:tracker", Account: "alice",
		AccessToken: "mcp-access-alice-7c1d", RefreshToken: "mcp-refresh-alice-93ab", UpdatedAt: now}
	if err := oa.app.store.SaveConnection(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if err := oa.app.store.SaveOAuthClient(ctx, store.OAuthClient{Issuer: "https://as.example", ClientID: "dyn-client", ClientSecret: "dyn-secret-55e2", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := oa.app.store.SaveConnectFlow(ctx, now, store.ConnectFlow{State: "state-1", PersonID: "alice", Provider: "mcp:tracker", Verifier: "pkce-verifier-0f4e", ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	credentials := []string{tok.AccessToken, tok.RefreshToken, conn.AccessToken, conn.RefreshToken, "dyn-secret-55e2", "pkce-verifier-0f4e", oauthSecret}
	shutdown := func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := oa.app.Shutdown(sctx); err != nil {
			t.Fatal(err)
		}
	}
	shutdown()
	dbPath := sqlitePath(oa.app.cfg)
	rows, raw := dumpSQLite(t, dbPath)
	if !strings.Contains(rows, "linear_tokens: org-a") || !strings.Contains(rows, keyring.Prefix) {
		t.Fatalf("the dump lacks the sealed grant:\n%s", rows)
	}
	for _, c := range credentials {
		if strings.Contains(rows, c) || bytes.Contains(raw, []byte(c)) {
			t.Errorf("credential %q is in the database in plain text", c)
		}
	}
	oa.noSecretsLogged(tok)

	// Restarts with another key, or with none: refused, nothing changed.
	cfg := *oa.app.cfg
	ring, _ := keyring.Parse(key)
	for name, keyFile := range map[string]string{"wrong key": writeKeyFile(t, genKey(t)), "no key": ""} {
		c := cfg
		c.SecretsAtRest = config.SecretsConfig{KeyFile: keyFile}
		app, err := New(ctx, &c, Options{Stderr: &syncBuffer{}})
		if err == nil {
			_ = app.Shutdown(ctx)
			t.Fatalf("%s: brain started", name)
		}
		if !strings.Contains(err.Error(), "encrypted under key "+ring.Current()) || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("%s: error %q does not say which key is missing", name, err)
		}
		if after, _ := dumpSQLite(t, dbPath); after != rows {
			t.Errorf("%s: the refused start changed the database", name)
		}
	}

	// The key rotated: the new key first, the old after it; brain secrets
	// rotate re-encrypts; then the new key alone opens everything.
	newKey := genKey(t)
	c := cfg
	c.SecretsAtRest = config.SecretsConfig{KeyFile: writeKeyFile(t, newKey, key)}
	var out bytes.Buffer
	if err := RotateSecrets(ctx, &c, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "6 re-encrypted from older keys") {
		t.Errorf("rotate said %q", out.String())
	}
	c.SecretsAtRest = config.SecretsConfig{KeyFile: writeKeyFile(t, newKey)}
	app, err := New(ctx, &c, Options{Stderr: &syncBuffer{}})
	if err != nil {
		t.Fatalf("start with the new key alone: %v", err)
	}
	defer app.Shutdown(ctx) //nolint:errcheck
	got, err := app.store.Connection(ctx, "alice", "mcp:tracker")
	if err != nil || got.AccessToken != conn.AccessToken || got.RefreshToken != conn.RefreshToken {
		t.Fatalf("connection after rotation = %+v, %v", got, err)
	}
	if lt, err := app.store.LinearToken(ctx, "org-a"); err != nil || lt.RefreshToken != tok.RefreshToken {
		t.Fatalf("linear token after rotation: %v", err)
	}
}

// TestSecrets_PlainTokensSealedAtFirstStartWithAKey: tokens stored
// without a key are encrypted when brain first starts with one.
func TestSecrets_PlainTokensSealedAtFirstStartWithAKey(t *testing.T) {
	oa := newOAuthApp(t)
	oa.install("org-a")
	tok := oa.token("org-a")
	ctx := context.Background()
	if err := oa.app.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	dbPath := sqlitePath(oa.app.cfg)
	if rows, _ := dumpSQLite(t, dbPath); !strings.Contains(rows, tok.RefreshToken) {
		t.Fatal("without a key the token is not stored as is (test premise)")
	}
	c := *oa.app.cfg
	c.SecretsAtRest = config.SecretsConfig{KeyFile: writeKeyFile(t, genKey(t))}
	logs := &syncBuffer{}
	app, err := New(ctx, &c, Options{Stderr: logs})
	if err != nil {
		t.Fatal(err)
	}
	got, err := app.store.LinearToken(ctx, "org-a")
	if err := app.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err != nil || got.RefreshToken != tok.RefreshToken {
		t.Fatalf("token after sealing: %v", err)
	}
	rows, raw := dumpSQLite(t, dbPath)
	if strings.Contains(rows, tok.RefreshToken) || strings.Contains(rows, tok.AccessToken) {
		t.Errorf("a token is still plain after a start with a key:\n%s", rows)
	}
	_ = raw // the freed pages of the old rows may keep the old text until SQLite reuses them
	if !strings.Contains(logs.String(), "encrypted stored credentials") {
		t.Errorf("the sealing was not logged:\n%s", logs)
	}
}
