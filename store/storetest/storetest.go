// Package storetest is the conformance suite every store driver runs: the
// behaviour store.Store (engine.Store and the store interfaces) promises,
// checked the same way for each driver (store/sqlite, store/postgres).
//
// It imports engine, store, tools and the standard library, never a
// driver: a driver's own tests call Run with a way to open it.
// Times are fixed values, never the wall clock, and nothing sleeps.
package storetest

import (
	"encoding/json"
	"testing"

	"brain/engine"
	"brain/store"
)

// NewDB creates an empty database for one test (with the implementation's
// production schema) and returns open, which opens a handle on it. Each call
// of open is a separate handle, as a separate brain process sharing the
// database would hold: the suite races two of them where two processes may
// race. NewDB closes the handles when t ends (t.Cleanup).
type NewDB func(t *testing.T) (open func() store.Store)

// Run runs the suite, each test on a database of its own.
func Run(t *testing.T, newDB NewDB) {
	tests := []struct {
		name string
		test func(t *testing.T, open func() store.Store)
	}{
		{"CreateAndGetSession", testCreateAndGetSession},
		{"CreateSessionDefaults", testCreateSessionDefaults},
		{"NotFound", testNotFound},
		{"CreateSessionDuplicateID", testCreateSessionDuplicateID},
		{"CreateSessionIdempotencyKey", testCreateSessionIdempotencyKey},
		{"CreateSessionExistingThread", testCreateSessionExistingThread},
		{"CreateSessionConcurrentSameKey", testCreateSessionConcurrentSameKey},
		{"SessionsFilter", testSessionsFilter},
		{"ListSessionsFilters", testListSessionsFilters},
		{"ListSessionsCursor", testListSessionsCursor},
		{"UsageReport", testUsageReport},
		{"CommitKeepsUsage", testCommitKeepsUsage},
		{"CommitContextSeq", testCommitContextSeq},

		{"CommitAssignsConsecutiveSeqs", testCommitAssignsConsecutiveSeqs},
		{"CommitEventDefaults", testCommitEventDefaults},
		{"CommitUpdateChangesSession", testCommitUpdateChangesSession},
		{"CommitUpdateErrorAborts", testCommitUpdateErrorAborts},
		{"CommitUpdatePanicWritesNothing", testCommitUpdatePanicWritesNothing},
		{"CommitPendingInput", testCommitPendingInput},
		{"CommitIdempotentInput", testCommitIdempotentInput},
		{"CommitIdempotentInputConcurrent", testCommitIdempotentInputConcurrent},
		{"CommitRejects", testCommitRejects},
		{"StartSessions", testStartSessions},
		{"StartSessionsRepeat", testStartSessionsRepeat},
		{"EventsAfterLimit", testEventsAfterLimit},
		{"ResultsHistory", testResultsHistory},

		{"ApprovalRoundTrip", testApprovalRoundTrip},
		{"CommitNewApprovalDefaults", testCommitNewApprovalDefaults},
		{"CommitNewApprovalAtomic", testCommitNewApprovalAtomic},
		{"ApprovalsFilter", testApprovalsFilter},
		{"ApprovalsDecider", testApprovalsDecider},
		{"ApprovalsDeciderPeople", testApprovalsDeciderPeople},
		{"CommitApproval", testCommitApproval},
		{"CommitApprovalUpdateErrorAborts", testCommitApprovalUpdateErrorAborts},
		{"CommitApprovalRejects", testCommitApprovalRejects},
		{"CommitApprovalRace", testCommitApprovalRace},
		{"ApprovalTeamFieldsRoundTrip", testApprovalTeamFieldsRoundTrip},
		{"CommitApprovalEmit", testCommitApprovalEmit},
		{"ApprovalVotesRace", testApprovalVotesRace},
		{"ApprovalVoteThenDeny", testApprovalVoteThenDeny},

		{"InboundDedupeAndOrder", testInboundDedupeAndOrder},
		{"InboundBatchOfDistinctKeys", testInboundBatchOfDistinctKeys},
		{"InboundBatchSharedKeys", testInboundBatchSharedKeys},
		{"InboundPerSource", testInboundPerSource},
		{"InboundPruneKeepsPending", testInboundPruneKeepsPending},
		{"InboundConcurrentDuplicates", testInboundConcurrentDuplicates},
		{"ClaimInbound", testClaimInbound},
		{"ClaimInboundRace", testClaimInboundRace},
		{"InboxBacklogs", testInboxBacklogs},
		{"CheckWritable", testCheckWritable},

		{"ClaimRunOnce", testClaimRunOnce},
		{"ClaimRunAcrossProcesses", testClaimRunAcrossProcesses},
		{"UpdateAndFinishRun", testUpdateAndFinishRun},
		{"RunsNewestFirstAndRunning", testRunsNewestFirstAndRunning},
		{"ClaimRunValidates", testClaimRunValidates},

		{"DeliveryCursors", testDeliveryCursors},
		{"ApprovalMessages", testApprovalMessages},
		{"PostedQuestions", testPostedQuestions},
		{"ThreadContexts", testThreadContexts},
		{"WorkspaceModes", testWorkspaceModes},

		{"Leases", testLeases},
		{"LeaseRace", testLeaseRace},
		{"LeaseStop", testLeaseStop},
		{"CommitFenced", testCommitFenced},
		{"CommitApprovalFenced", testCommitApprovalFenced},
		{"FenceTakeoverRace", testFenceTakeoverRace},

		{"LinearTokens", testLinearTokens},
		{"LinearRefreshLease", testLinearRefreshLease},
		{"OAuthStates", testOAuthStates},
		{"LinearSessionOrganizations", testLinearSessionOrganizations},
		{"LinearParkedInbound", testLinearParkedInbound},

		{"CodeChannels", testCodeChannels},
		{"CodeChannelsPruned", testCodeChannelsPruned},

		{"People", testPeople},
		{"Connections", testConnections},
		{"ExpiringConnections", testExpiringConnections},
		{"ConnectionRefreshLease", testConnectionRefreshLease},
		{"ConnectionServiceAccount", testConnectionServiceAccount},
		{"OAuthClientsAndConnectFlows", testOAuthClientsAndConnectFlows},
		{"SecretsSealed", testSecretsSealed},
		{"SecretsPlainMigrated", testSecretsPlainMigrated},
		{"SecretsSealedRotationRace", testSecretsSealedRotationRace},
		{"AuditChain", testAuditChain},
		{"AuditRejects", testAuditRejects},
		{"AuditConcurrentAppenders", testAuditConcurrentAppenders},
		{"AuditOfCommit", testAuditOfCommit},
		{"AuditPrune", testAuditPrune},
		{"PruneSessions", testPruneSessions},
		{"EraseAuthor", testEraseAuthor},
		{"Spend", testSpend},
		{"RateLimits", testRateLimits},
		{"RateLimitsRace", testRateLimitsRace},
		{"MemoryRoundTrip", testMemoryRoundTrip},
		{"MemoryLimits", testMemoryLimits},
		{"MemoryRejects", testMemoryRejects},
		{"MemoryConcurrentEdits", testMemoryConcurrentEdits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.test(t, newDB(t))
		})
	}
}

func userMessage(id, text string) engine.Event {
	data, _ := json.Marshal(map[string]string{"text": text})
	return engine.Event{ID: id, Type: engine.EventUserMessage, Data: data}
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
