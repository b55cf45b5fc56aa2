// Package storetest is the conformance suite every store runs: the
// behaviour engine.Store and the engine/durable interfaces promise, checked
// the same way for each implementation (store/sqlite today, others later).
//
// It imports engine, engine/durable, tools and the standard library, never
// a store: an implementation's own tests call Run with a way to open it.
// Times are fixed values, never the wall clock, and nothing sleeps.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"brain/engine"
	"brain/engine/durable"
)

// Store is everything a brain store implements.
type Store interface {
	engine.Store
	durable.Threads
	durable.Inbox
	durable.Runs
	durable.ChannelState
}

// NewDB creates an empty database for one test (with the implementation's
// production schema) and returns open, which opens a handle on it. Each call
// of open is a separate handle, as a separate brain process sharing the
// database would hold: the suite races two of them where two processes may
// race. NewDB closes the handles when t ends (t.Cleanup).
type NewDB func(t *testing.T) (open func() Store)

// Run runs the suite, each test on a database of its own.
func Run(t *testing.T, newDB NewDB) {
	tests := []struct {
		name string
		test func(t *testing.T, open func() Store)
	}{
		{"CreateAndGetSession", testCreateAndGetSession},
		{"CreateSessionDefaults", testCreateSessionDefaults},
		{"NotFound", testNotFound},
		{"CreateSessionDuplicateID", testCreateSessionDuplicateID},
		{"CreateSessionIdempotencyKey", testCreateSessionIdempotencyKey},
		{"CreateSessionExistingThread", testCreateSessionExistingThread},
		{"CreateSessionConcurrentSameKey", testCreateSessionConcurrentSameKey},
		{"SessionsFilter", testSessionsFilter},

		{"CommitAssignsConsecutiveSeqs", testCommitAssignsConsecutiveSeqs},
		{"CommitEventDefaults", testCommitEventDefaults},
		{"CommitUpdateChangesSession", testCommitUpdateChangesSession},
		{"CommitUpdateErrorAborts", testCommitUpdateErrorAborts},
		{"CommitUpdatePanicWritesNothing", testCommitUpdatePanicWritesNothing},
		{"CommitPendingInput", testCommitPendingInput},
		{"CommitIdempotentInput", testCommitIdempotentInput},
		{"CommitIdempotentInputConcurrent", testCommitIdempotentInputConcurrent},
		{"CommitRejects", testCommitRejects},
		{"EventsAfterLimit", testEventsAfterLimit},
		{"ResultsHistory", testResultsHistory},

		{"ApprovalRoundTrip", testApprovalRoundTrip},
		{"CommitNewApprovalDefaults", testCommitNewApprovalDefaults},
		{"CommitNewApprovalAtomic", testCommitNewApprovalAtomic},
		{"ApprovalsFilter", testApprovalsFilter},
		{"CommitApproval", testCommitApproval},
		{"CommitApprovalUpdateErrorAborts", testCommitApprovalUpdateErrorAborts},
		{"CommitApprovalRejects", testCommitApprovalRejects},
		{"CommitApprovalRace", testCommitApprovalRace},

		{"InboundDedupeAndOrder", testInboundDedupeAndOrder},
		{"InboundPerSource", testInboundPerSource},
		{"InboundPruneKeepsPending", testInboundPruneKeepsPending},
		{"InboundConcurrentDuplicates", testInboundConcurrentDuplicates},

		{"ClaimRunOnce", testClaimRunOnce},
		{"ClaimRunAcrossProcesses", testClaimRunAcrossProcesses},
		{"UpdateAndFinishRun", testUpdateAndFinishRun},
		{"RunsNewestFirstAndRunning", testRunsNewestFirstAndRunning},
		{"ClaimRunValidates", testClaimRunValidates},

		{"DeliveryCursors", testDeliveryCursors},
		{"ApprovalMessages", testApprovalMessages},
		{"PostedQuestions", testPostedQuestions},
		{"ThreadContexts", testThreadContexts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.test(t, newDB(t))
		})
	}
}

// t0 has a nanosecond part and a non-UTC zone so tests catch precision and
// location bugs in the time round-trip.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

func testSession(id string, created time.Time) engine.Session {
	return engine.Session{
		ID:          id,
		Agent:       "default",
		Origin:      engine.OriginAPI,
		Interactive: true,
		StartedBy:   "U123",
		Status:      engine.StatusIdle,
		CreatedAt:   created,
		UpdatedAt:   created,
	}
}

func createSession(tb testing.TB, st engine.Store, s engine.Session) engine.Session {
	tb.Helper()
	got, created, err := st.CreateSession(context.Background(), s, "")
	if err != nil {
		tb.Fatalf("CreateSession(%s): %v", s.ID, err)
	}
	if !created {
		tb.Fatalf("CreateSession(%s): created = false", s.ID)
	}
	return got
}

func userMessage(id, text string) engine.Event {
	data, _ := json.Marshal(map[string]string{"text": text})
	return engine.Event{ID: id, Type: engine.EventUserMessage, Data: data}
}

func commit(tb testing.TB, st engine.Store, c engine.Commit) engine.CommitResult {
	tb.Helper()
	if c.Now.IsZero() {
		c.Now = t0
	}
	res, err := st.Commit(context.Background(), c)
	if err != nil {
		tb.Fatalf("Commit(%s): %v", c.SessionID, err)
	}
	return res
}

func seqs(evs []engine.Event) []int64 {
	out := make([]int64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

func ids(evs []engine.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

func sessionIDs(ss []engine.Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

// eventID makes distinct, readable event ids for loops.
func eventID(prefix string, i int) string { return fmt.Sprintf("%s-%03d", prefix, i) }
