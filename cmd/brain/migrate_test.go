package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"brain/engine"
	"brain/store/postgres/pgtest"
	"brain/store/sqlite"
	"brain/store/storetest"
)

func TestMigrate_CopiesTheConfiguredDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	st, err := sqlite.Open(ctx, filepath.Join(data, "brain.db"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.CreateSession(t, st, storetest.Session("s1", storetest.T0))
	storetest.Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{{ID: "e1", Type: engine.EventUserMessage, Data: []byte(`{"text":"hi"}`)}}})
	st.Close()
	cfg := writeServeConfig(t, dir, "127.0.0.1:0", "http://127.0.0.1:1")
	dsn := pgtest.NewDatabase(t)

	var out bytes.Buffer
	if err := run(ctx, []string{"migrate", "--to", "postgres", "--config", cfg, "--dsn", dsn}, nil, &out, io.Discard); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out.String())
	}
	for _, line := range []string{`sessions\s+1\s+1\s+ok`, `events\s+1\s+1\s+ok`, `approvals\s+0\s+0\s+ok`, `every table's rows match`} {
		if !regexp.MustCompile(line).MatchString(out.String()) {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
	err = run(ctx, []string{"migrate", "--to", "postgres", "--from", filepath.Join(data, "brain.db"), "--dsn", dsn}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--replace") {
		t.Errorf("migrate into the filled target = %v; want a refusal naming --replace", err)
	}
	if err := run(ctx, []string{"migrate", "--to", "postgres", "--from", filepath.Join(data, "brain.db"), "--dsn", dsn, "--replace"}, nil, io.Discard, io.Discard); err != nil {
		t.Errorf("migrate --replace: %v", err)
	}
	if err := run(ctx, []string{"migrate", "--to", "mysql", "--from", "x.db", "--dsn", dsn}, nil, io.Discard, io.Discard); err == nil {
		t.Error("--to mysql accepted")
	}
	// A running brain holds data_dir's lock: migrate refuses to copy a
	// database that is being written.
	lock, err := os.OpenFile(filepath.Join(data, "brain.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	err = run(ctx, []string{"migrate", "--to", "postgres", "--config", cfg, "--dsn", dsn, "--replace"}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "in use by another brain process") {
		t.Errorf("migrate while data_dir is locked = %v; want a refusal", err)
	}
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // the test ends here

	t.Setenv("BRAIN_DATABASE_URL", "")
	if err := run(ctx, []string{"migrate", "--to", "postgres", "--from", filepath.Join(data, "brain.db")}, nil, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--dsn") {
		t.Errorf("migrate without a dsn = %v; want an error naming --dsn", err)
	}
}
