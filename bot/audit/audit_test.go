package audit_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"database/sql"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"brain/bot/audit"
	"brain/store"
	"brain/store/sqlite"
)

var t0 = time.Date(2025, 6, 1, 9, 0, 0, 123456789, time.UTC)

// trail is a real SQLite store with a few acts recorded and sealed twice.
func trail(t *testing.T) (store.Store, string, ed25519.PrivateKey) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "brain.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	now := t0
	clock := func() time.Time { now = now.Add(time.Second); return now }
	rec := &audit.Recorder{Store: st, Now: clock}
	ctx := context.Background()
	acts := []struct{ actor, action, target string }{
		{"U1", audit.ActionSignedIn, "console"},
		{"key:ops", audit.ActionAPIKeyUsed, "POST /v1/sessions"},
		{"brain", audit.ActionConfigReloaded, "config.yaml"},
	}
	for i, a := range acts {
		if err := rec.Record(ctx, a.actor, a.action, a.target, map[string]any{"i": i, "html": "<a&b>"}); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if _, err := audit.SealHead(ctx, st, key, clock()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := audit.SealHead(ctx, st, key, clock()); err != nil {
		t.Fatal(err)
	}
	// Nothing new since: no second seal of the same head.
	if e, err := audit.SealHead(ctx, st, key, clock()); err != nil || e.Seq != 0 {
		t.Fatalf("SealHead with a seal at the head = %+v, %v; want nothing", e, err)
	}
	return st, path, key
}

func TestVerify_Passes(t *testing.T) {
	st, _, key := trail(t)
	r, err := audit.VerifyStore(context.Background(), st, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if r.Break != nil || r.Entries != 5 || r.Seals != 2 || r.Checked != 2 || r.Unsealed != 0 {
		t.Errorf("report = %+v (%s); want 5 entries, 2 seals checked", r, r.Describe())
	}
}

// TestVerify_ChangedByte: one byte of one entry changed in the database is
// named, whichever field it is in.
func TestVerify_ChangedByte(t *testing.T) {
	for _, tc := range []struct{ name, update string }{
		{"detail", `UPDATE audit_log SET detail = replace(detail, '"i":1', '"i":2') WHERE seq = 2`},
		{"actor", `UPDATE audit_log SET actor = 'key:opt' WHERE seq = 2`},
		{"time", `UPDATE audit_log SET at = replace(at, '.123', '.124') WHERE seq = 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, path, key := trail(t)
			exec(t, path, tc.update)
			r, err := audit.VerifyStore(context.Background(), st, key.Public().(ed25519.PublicKey))
			if err != nil {
				t.Fatal(err)
			}
			if r.Break == nil || r.Break.Seq != 2 {
				t.Fatalf("report = %s; want entry 2 named", r.Describe())
			}
			if !strings.Contains(r.Describe(), "entry 2") {
				t.Errorf("Describe = %q", r.Describe())
			}
		})
	}
}

// TestVerify_SwappedOrder: two entries swapped (their seqs exchanged) are
// caught at the first of them.
func TestVerify_SwappedOrder(t *testing.T) {
	st, path, key := trail(t)
	exec(t, path, `UPDATE audit_log SET seq = -1 WHERE seq = 1`)
	exec(t, path, `UPDATE audit_log SET seq = 1 WHERE seq = 2`)
	exec(t, path, `UPDATE audit_log SET seq = 2 WHERE seq = -1`)
	r, err := audit.VerifyStore(context.Background(), st, key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if r.Break == nil || r.Break.Seq != 1 {
		t.Fatalf("report = %s; want entry 1 named", r.Describe())
	}
}

// TestVerify_ForgedSeal: a seal re-signed with another key, or a chain
// verified against the wrong key, fails at the seal.
func TestVerify_WrongKey(t *testing.T) {
	st, _, _ := trail(t)
	other, _, _ := ed25519.GenerateKey(nil)
	r, err := audit.VerifyStore(context.Background(), st, other)
	if err != nil {
		t.Fatal(err)
	}
	if r.Break == nil || r.Break.Seq != 3 || !strings.Contains(r.Break.Reason, "not among the keys") {
		t.Fatalf("report = %s; want the first seal (entry 3) refused", r.Describe())
	}
}

// TestExport_VerifiesOffline: the JSON Lines export verifies alone, and a
// byte changed in the file is named.
func TestExport_VerifiesOffline(t *testing.T) {
	st, _, key := trail(t)
	var buf bytes.Buffer
	n, err := audit.Export(context.Background(), st, &buf, time.Time{}, time.Time{})
	if err != nil || n != 5 {
		t.Fatalf("Export = %d, %v; want 5", n, err)
	}
	pub := key.Public().(ed25519.PublicKey)
	r, err := audit.VerifyExport(bytes.NewReader(buf.Bytes()), pub)
	if err != nil || r.Break != nil || r.Entries != 5 {
		t.Fatalf("VerifyExport = %s, %v", r.Describe(), err)
	}
	changed := strings.Replace(buf.String(), `"actor":"brain","action":"config.reloaded"`, `"actor":"brainz","action":"config.reloaded"`, 1)
	r, err = audit.VerifyExport(strings.NewReader(changed), pub)
	if err != nil || r.Break == nil || r.Break.Seq != 4 {
		t.Fatalf("VerifyExport of a changed file = %s, %v; want entry 4 named", r.Describe(), err)
	}
	// A time range exports part of the chain, which still verifies.
	buf.Reset()
	if n, err := audit.Export(context.Background(), st, &buf, t0.Add(2*time.Second), t0.Add(5*time.Second)); err != nil || n != 3 {
		t.Fatalf("Export of a range = %d, %v; want 3", n, err)
	}
	if r, err := audit.VerifyExport(&buf, pub); err != nil || r.Break != nil {
		t.Fatalf("VerifyExport of a range = %s, %v", r.Describe(), err)
	}
}

func TestLoadKeys(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	dir := t.TempDir()
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	privPath := filepath.Join(dir, "audit.pem")
	if err := os.WriteFile(privPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	pder, _ := x509.MarshalPKIXPublicKey(pub)
	pubPath := filepath.Join(dir, "audit.pub")
	if err := os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder}), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := audit.LoadPrivateKey(privPath)
	if err != nil || !got.Equal(priv) {
		t.Fatalf("LoadPrivateKey = %v", err)
	}
	for _, p := range []string{pubPath, privPath} {
		if k, err := audit.LoadPublicKey(p); err != nil || !k.Equal(pub) {
			t.Errorf("LoadPublicKey(%s) = %v", p, err)
		}
	}
	if _, err := audit.LoadPrivateKey(pubPath); err == nil {
		t.Error("LoadPrivateKey of a public key succeeded")
	}
}

func exec(t *testing.T, path, q string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
