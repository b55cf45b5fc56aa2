package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

// Erasure's words: none of Alice's may survive her erasure, all of Bob's
// must (AliceWritten and BobWritten are what SeedErasure writes of them).
var (
	AliceWritten = []string{"alice-secret-plan", "alice-answer-text", "alice-memory-fact", "alice-file-name.pdf", "alice-conn-token-77aa"}
	BobWritten   = []string{"bob-keeps-this", "bob-memory-fact"}
)

// SeedErasure writes, at now, Alice (person "alice", Slack UALICE, a
// GitHub connection) and the Slack session "shared" (agent "default") she
// shares with Bob (UBOB): each wrote a message naming a file (aliceFile,
// bobFile: hashes in the caller's file store), the agent answered, she
// answered a question; and each has a memory file in their person scope.
// The session's turns are all done: a daemon started on it runs nothing.
func SeedErasure(tb testing.TB, st store.Store, now time.Time, aliceFile, bobFile string) {
	tb.Helper()
	ctx := context.Background()
	if err := st.SavePerson(ctx, store.Person{ID: "alice", Name: "Alice", UpdatedAt: now}); err != nil {
		tb.Fatal(err)
	}
	if err := st.LinkIdentity(ctx, now, "alice", store.Identity{Surface: store.SurfaceSlack, ExternalID: "UALICE"}); err != nil {
		tb.Fatal(err)
	}
	if err := st.SaveConnection(ctx, store.Connection{ID: "c1", PersonID: "alice", Provider: "github", Account: "alice-gh",
		AccessToken: "alice-conn-token-77aa", UpdatedAt: now}); err != nil {
		tb.Fatal(err)
	}
	s := Session("shared", now)
	s.Agent, s.Origin, s.StartedBy, s.ThreadKey = "default", engine.OriginSlack, "UALICE", "slack:T1:C1:1.0"
	CreateSession(tb, st, s)
	msg := func(id string, in engine.Input) engine.Event {
		data, _ := json.Marshal(in)
		return engine.Event{ID: id, Type: engine.EventUserMessage, Data: data}
	}
	agent, _ := json.Marshal(engine.AgentMessage{Text: "noted, both of you"})
	Commit(tb, st, engine.Commit{SessionID: "shared", Now: now, Events: []engine.Event{
		msg("m1", engine.Input{Text: "alice-secret-plan for launch", Author: "UALICE",
			Files: []engine.FileRef{{Hash: aliceFile, Name: "alice-file-name.pdf", Size: 21, Source: "slack"}}}),
		msg("m2", engine.Input{Text: "bob-keeps-this note", Author: "UBOB",
			Files: []engine.FileRef{{Hash: bobFile, Name: "bob.txt", Size: 19, Source: "slack"}}}),
		{ID: "m3", Type: engine.EventAgentMessage, Data: agent},
		msg("m4", engine.Input{Text: "alice-answer-text", Author: "UALICE", Answer: &engine.Answer{QuestionID: "q1", Value: "yes", Text: "alice-answer-text"}}),
	}, Update: func(s *engine.Session) error {
		s.Checkpoint, s.InputCursor = 4, 4 // answered: nothing to run
		return nil
	}})
	for scope, fact := range map[string]string{"person:slack:T1:UALICE": "alice-memory-fact", "person:slack:T1:UBOB": "bob-memory-fact"} {
		if err := st.CommitMemory(ctx, store.MemoryCommit{Scope: scope, Now: now, By: "agent", SessionID: "shared",
			Writes: []store.MemoryWrite{{Path: "me.md", Content: fact, Op: "create", Diff: "+" + fact}}}); err != nil {
			tb.Fatal(err)
		}
	}
}
