package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"brain/bot/filestore"
	"brain/channels/slack/slackfake"
	"brain/engine/model/fakemodel"
	"brain/store"
	"brain/store/sqlite"
	"brain/store/storetest"
)

// TestPeopleErase_RealBinaryLeavesNoTrace: a daemon whose database holds
// Alice's and Bob's messages in one shared Slack session, their files,
// memory and Alice's connection; `brain people erase alice`, run as the
// real binary, erases her through the daemon. Afterwards a dump of every
// table and of the file's bytes finds none of her words, Bob's are all
// there, her file is gone from data_dir/files, and `brain audit export`
// shows the erasure by the API key's holder.
func TestPeopleErase_RealBinaryLeavesNoTrace(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")

	files, err := filestore.Open(filepath.Join(data, "files"), 1<<20, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	aliceFile, _ := files.Put([]byte("alice's attached file"))
	bobFile, _ := files.Put([]byte("bob's attached file"))
	st, err := sqlite.Open(context.Background(), filepath.Join(data, "brain.db"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.SeedErasure(t, st, time.Now().UTC().Truncate(time.Second), aliceFile, bobFile)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	model := fakemodel.New()
	defer model.Close()
	slack := slackfake.New()
	defer slack.Close()
	addr := freeAddr(t)
	cfg := writeServeConfig(t, dir, addr, model.URL())
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("api_keys: [{name: ops, key: ops-key-0123456789abcdef0123456789abcdef}]\n" +
		"slack: {bot_token: xoxb-test, signing_secret: test-signing-secret, api_url: " + slack.URL() + "/api/}\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d := startDaemon(t, cfg, addr)

	brain := func(args ...string) (string, error) {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "BRAIN_TEST_RUN_MAIN=1")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String() + errOut.String(), err
	}
	out, err := brain("people", "erase", "--help")
	if err != nil || !strings.Contains(out, "brain people erase --config FILE [--json] PERSON") {
		t.Errorf("people erase --help = %v:\n%s", err, out)
	}
	if out, err := brain("people", "erase", "--config", cfg); err == nil || !strings.Contains(out, "one person id") {
		t.Errorf("people erase without a person = %v:\n%s", err, out)
	}
	out, err = brain("people", "erase", "--config", cfg, "alice")
	if err != nil {
		t.Fatalf("brain people erase alice: %v\n%s\n%s", err, out, d.logs)
	}
	if want := "erased alice: 2 messages in 1 sessions replaced by a marker, 1 files, 1 memory files, 1 identities"; !strings.Contains(out, want) {
		t.Errorf("brain people erase printed %q; want %q", out, want)
	}
	if out, err := brain("people", "erase", "--config", cfg, "alice"); err == nil {
		t.Errorf("erasing alice again succeeded: %s", out)
	}

	// Stopped, so the database's files are all written out.
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("daemon exit: %v\n%s", err, d.logs)
	}
	dump := storetest.DumpSQLite(t, filepath.Join(data, "brain.db"))
	for _, w := range storetest.AliceWritten {
		if dump.Holds(w) {
			t.Errorf("Alice's %q survives in the database", w)
		}
	}
	for _, w := range storetest.BobWritten {
		if !dump.Holds(w) {
			t.Errorf("Bob's %q is gone", w)
		}
	}
	if !dump.Holds(`"text":"bob-keeps-this note"`) || !dump.Holds("its author was erased") {
		t.Errorf("the shared session lost its shape:\n%s", dump.Rows)
	}
	if _, err := files.Get(aliceFile); err == nil {
		t.Error("Alice's file is still in data_dir/files")
	}
	if _, err := files.Get(bobFile); err != nil {
		t.Errorf("Bob's file: %v", err)
	}

	out, err = brain("audit", "export", "--config", cfg)
	if err != nil {
		t.Fatalf("brain audit export: %v\n%s", err, out)
	}
	var erasure *store.AuditEntry
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e store.AuditEntry
		if json.Unmarshal([]byte(line), &e) == nil && e.Target == "person:alice" {
			erasure = &e
		}
	}
	if erasure == nil || erasure.Action != "person.erased" || erasure.Actor != "ops" {
		t.Errorf("the audit trail's erasure = %+v; want person.erased of person:alice by ops in:\n%s", erasure, out)
	}
}
