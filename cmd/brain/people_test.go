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
	"brain/engine"
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
	alice := []string{"alice-secret-plan", "alice-answer-text", "alice-memory-fact", "alice-file-name.pdf", "alice-conn-token-77aa"}
	bob := []string{"bob-keeps-this", "bob-memory-fact"}

	files, err := filestore.Open(filepath.Join(data, "files"), 1<<20, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	aliceFile, _ := files.Put([]byte("alice's attached file"))
	bobFile, _ := files.Put([]byte("bob's attached file"))
	seedErasure(t, filepath.Join(data, "brain.db"), aliceFile, bobFile)

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
	for _, w := range alice {
		if dump.Holds(w) {
			t.Errorf("Alice's %q survives in the database", w)
		}
	}
	for _, w := range bob {
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

// seedErasure writes, before the daemon starts, Alice (Slack UALICE, a
// connection) and a Slack session she shares with Bob: each wrote a
// message with a file, she answered a question, and each has memory.
func seedErasure(t *testing.T, path, aliceFile, bobFile string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Second)
	if err := st.SavePerson(ctx, store.Person{ID: "alice", Name: "Alice", UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := st.LinkIdentity(ctx, now, "alice", store.Identity{Surface: store.SurfaceSlack, ExternalID: "UALICE"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveConnection(ctx, store.Connection{ID: "c1", PersonID: "alice", Provider: "github", Account: "alice-gh",
		AccessToken: "alice-conn-token-77aa", UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	s := storetest.Session("shared", now)
	s.Agent, s.Origin, s.StartedBy, s.ThreadKey = "default", engine.OriginSlack, "UALICE", "slack:T1:C1:1.0"
	storetest.CreateSession(t, st, s)
	msg := func(id string, in engine.Input) engine.Event {
		data, _ := json.Marshal(in)
		return engine.Event{ID: id, Type: engine.EventUserMessage, Data: data}
	}
	agent, _ := json.Marshal(engine.AgentMessage{Text: "noted, both of you"})
	storetest.Commit(t, st, engine.Commit{SessionID: "shared", Now: now, Events: []engine.Event{
		msg("m1", engine.Input{Text: "alice-secret-plan for launch", Author: "UALICE",
			Files: []engine.FileRef{{Hash: aliceFile, Name: "alice-file-name.pdf", Size: 21, Source: "slack"}}}),
		msg("m2", engine.Input{Text: "bob-keeps-this note", Author: "UBOB",
			Files: []engine.FileRef{{Hash: bobFile, Name: "bob.txt", Size: 19, Source: "slack"}}}),
		{ID: "m3", Type: engine.EventAgentMessage, Data: agent},
		msg("m4", engine.Input{Text: "alice-answer-text", Author: "UALICE", Answer: &engine.Answer{QuestionID: "q1", Value: "yes", Text: "alice-answer-text"}}),
	}, Update: func(s *engine.Session) error {
		s.Checkpoint, s.InputCursor = 4, 4 // answered: nothing to run when the daemon starts
		return nil
	}})
	for scope, fact := range map[string]string{"person:slack:T1:UALICE": "alice-memory-fact", "person:slack:T1:UBOB": "bob-memory-fact"} {
		if err := st.CommitMemory(ctx, store.MemoryCommit{Scope: scope, Now: now, By: "agent", SessionID: "shared",
			Writes: []store.MemoryWrite{{Path: "me.md", Content: fact, Op: "create", Diff: "+" + fact}}}); err != nil {
			t.Fatal(err)
		}
	}
}
