package bot

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/bot/audit"
	"brain/bot/config"
	"brain/engine"
)

// TestAudit_RealRunVerifies: a daemon with an API key, budgets and a
// signing key records the key's writes and an admin's budget change,
// seals the chain at shutdown, and brain audit verify (from the database,
// and from an export checked with the public key alone) passes.
func TestAudit_RealRunVerifies(t *testing.T) {
	dir := t.TempDir()
	_, priv, _ := ed25519.GenerateKey(nil)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	keyPath := filepath.Join(dir, "audit.pem")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "secret-api-key-9f3c8e1d9a7b6c5d4e3f2a1b0c9d8e7f"
	ta := newTestApp(t, fmt.Sprintf(`api_keys:
  - {name: ops, key: %s}
audit: {signing_key_file: %s, seal_every: 1h}
budgets:
  - {scope: person, period: day, tokens: 1000000}
`, key, keyPath), Options{})
	var s engine.Session
	ta.must(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"message": "hello"}, &s)
	ta.waitStatus(s.ID, engine.StatusIdle)
	if status, _, body := ta.do("PUT", "/v1/budgets", map[string]any{"scope": "person", "subject": "ops", "period": "day", "tokens": 5}); status != http.StatusBadRequest {
		t.Errorf("PUT /v1/budgets without a reason = %d %s, want 400", status, body)
	}
	ta.must(http.StatusOK, "PUT", "/v1/budgets", map[string]any{"scope": "person", "subject": "ops", "period": "day", "tokens": 5, "reason": "test"}, nil)
	var listed struct {
		Budgets []struct {
			Subject string `json:"subject"`
			Reason  string `json:"reason"`
			SetBy   string `json:"set_by"`
		} `json:"budgets"`
	}
	ta.must(http.StatusOK, "GET", "/v1/budgets", nil, &listed)
	if len(listed.Budgets) != 1 || listed.Budgets[0].Subject != "ops" || listed.Budgets[0].Reason != "test" || listed.Budgets[0].SetBy != "ops" {
		t.Errorf("GET /v1/budgets = %+v", listed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ta.app.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	cfg, err := config.Load(filepath.Join(filepath.Dir(ta.app.cfg.DataDir), "config.yaml"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	r, err := AuditVerify(context.Background(), cfg, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Break != nil || r.Seals < 1 || r.Checked < 1 || r.Unsealed != 0 {
		t.Fatalf("verify of the real run: %s", r.Describe())
	}
	export := filepath.Join(dir, "audit.jsonl")
	f, err := os.Create(export)
	if err != nil {
		t.Fatal(err)
	}
	n, err := AuditExport(context.Background(), cfg, f, time.Time{}, time.Time{})
	f.Close()
	if err != nil || n != r.Entries {
		t.Fatalf("export = %d, %v; want %d", n, err, r.Entries)
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(priv.Public())
	pubPath := filepath.Join(dir, "audit.pub")
	if err := os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	if r2, err := AuditVerify(context.Background(), nil, export, pubPath); err != nil || r2.Break != nil || r2.Checked != r.Checked {
		t.Fatalf("verify of the export: %s, %v", r2.Describe(), err)
	}
	raw, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"actor":"key:ops","action":"api_key.used","target":"POST /v1/sessions"`,
		`"action":"budget.override","target":"person/ops/day"`, `"action":"` + audit.ActionSealed + `"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("export lacks %s:\n%s", want, raw)
		}
	}
	if strings.Contains(string(raw), key) {
		t.Error("the API key's secret is in the audit trail")
	}
}
