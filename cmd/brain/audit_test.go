package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"brain/store"
)

// TestAuditVerify_File: brain audit verify on an export passes, and on
// the same export with one byte changed exits with an error naming the
// entry.
func TestAuditVerify_File(t *testing.T) {
	var lines []string
	prev := store.AuditEntry{}
	for i := range 3 {
		e := store.NextAudit(prev, store.AuditRecord{At: time.Date(2025, 6, 1, 9, i, 0, 0, time.UTC), Actor: "U1", Action: "console.signed_in", Target: "console"})
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
		prev = e
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(good, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines[1] = strings.Replace(lines[1], `"actor":"U1"`, `"actor":"U2"`, 1)
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// --public-key is required with --file when there is no config to
	// read a key from; a key that is no PEM fails before anything is read.
	var out bytes.Buffer
	err := run(context.Background(), []string{"audit", "verify", "--file", good, "--public-key", good}, nil, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not PEM") {
		t.Errorf("verify with a bad key = %v", err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("listen: 127.0.0.1:0\ndata_dir: ./data\nmodels: {default: {provider: fake}}\nagents: [{name: default, model: default}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"audit", "verify", "--config", cfg, "--file", good}, nil, &out, io.Discard); err != nil {
		t.Fatalf("verify of a good export: %v (%s)", err, out.String())
	}
	if !strings.HasPrefix(out.String(), "ok: 3 entries") {
		t.Errorf("verify printed %q", out.String())
	}
	out.Reset()
	err = run(context.Background(), []string{"audit", "verify", "--config", cfg, "--file", bad}, nil, &out, io.Discard)
	if err == nil || !strings.Contains(out.String(), "BROKEN at entry 2") {
		t.Errorf("verify of a changed export = %v, %q; want entry 2 named", err, out.String())
	}
}
