package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"brain/engine"
	"brain/store"
)

func auditRecord(i int, at time.Time) store.AuditRecord {
	return store.AuditRecord{
		At: at, Actor: fmt.Sprintf("U%d", i), Action: "console.signed_in", Target: "console",
		Detail: json.RawMessage(fmt.Sprintf(`{ "n": %d, "note": "spaced"}`, i)),
	}
}

// testAuditChain: entries chain from the genesis hash, read back byte for
// byte (the hash still holds), filter by time and seq, and the head is
// the newest.
func testAuditChain(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	head, err := st.AuditHead(ctx)
	if err != nil || head.Seq != 0 || head.Hash != store.AuditGenesis {
		t.Fatalf("AuditHead of an empty chain = %+v, %v; want seq 0, genesis", head, err)
	}
	var recs []store.AuditRecord
	for i := range 5 {
		recs = append(recs, auditRecord(i, T0.Add(time.Duration(i)*time.Minute)))
	}
	wrote, err := st.AppendAudit(ctx, recs[:2]...)
	if err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	more, err := st.AppendAudit(ctx, recs[2:]...)
	if err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	wrote = append(wrote, more...)
	all, err := st.AuditEntries(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 {
		t.Fatalf("AuditEntries = %d entries, want 5", len(all))
	}
	for i, e := range all {
		if e.Seq != int64(i+1) || e.Hash != wrote[i].Hash || !e.At.Equal(recs[i].At) || string(e.Detail) != string(wrote[i].Detail) {
			t.Errorf("entry %d = %+v, want %+v", i, e, wrote[i])
		}
	}
	if string(all[0].Detail) != `{"n":0,"note":"spaced"}` {
		t.Errorf("detail stored as %s, want it compacted", all[0].Detail)
	}
	if all[0].Prev != store.AuditGenesis {
		t.Errorf("first entry's prev = %s, want genesis", all[0].Prev)
	}
	if b := store.VerifyChain(all); b != nil {
		t.Errorf("VerifyChain: %v", b)
	}
	part, err := st.AuditEntries(ctx, store.AuditQuery{From: T0.Add(time.Minute), To: T0.Add(3 * time.Minute)})
	if err != nil || len(part) != 2 || part[0].Seq != 2 {
		t.Errorf("AuditEntries from..to = %d entries (first %v), %v; want 2 from seq 2", len(part), part, err)
	}
	page, err := st.AuditEntries(ctx, store.AuditQuery{After: 3, Limit: 1})
	if err != nil || len(page) != 1 || page[0].Seq != 4 {
		t.Errorf("AuditEntries after 3 limit 1 = %v, %v; want seq 4", page, err)
	}
	head, err = st.AuditHead(ctx)
	if err != nil || head.Seq != 5 || head.Hash != wrote[4].Hash || head.Action != recs[4].Action {
		t.Errorf("AuditHead = %+v, %v; want entry 5", head, err)
	}
}

// testAuditRejects: a record without an action or time, or with a detail
// that is not a JSON object, is refused and nothing is written.
func testAuditRejects(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	bad := []store.AuditRecord{
		{At: T0, Actor: "U1"},
		{Action: "x", Actor: "U1"},
		{At: T0, Action: "x", Detail: json.RawMessage(`[1]`)},
		{At: T0, Action: "x", Detail: json.RawMessage(`{"a":`)},
		{At: T0, Action: string(make([]byte, 600))},
	}
	for i, r := range bad {
		if _, err := st.AppendAudit(ctx, auditRecord(0, T0), r); err == nil {
			t.Errorf("AppendAudit of bad record %d succeeded", i)
		}
	}
	if all, err := st.AuditEntries(ctx, store.AuditQuery{}); err != nil || len(all) != 0 {
		t.Errorf("after refused appends, %d entries, %v; want none", len(all), err)
	}
}

// testAuditConcurrentAppenders: appenders on two handles (two processes)
// at once make one chain, no seq twice, no fork.
func testAuditConcurrentAppenders(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	stores := [2]store.Store{open(), open()}
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make([]error, writers)
	start := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				if _, err := stores[w%2].AppendAudit(ctx, auditRecord(w*100+i, T0)); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", w, err)
		}
	}
	all, err := stores[1].AuditEntries(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != writers*each {
		t.Fatalf("%d entries, want %d", len(all), writers*each)
	}
	if b := store.VerifyChain(all); b != nil {
		t.Errorf("VerifyChain after concurrent appends: %v", b)
	}
}

// testAuditOfCommit: an approval decision committed to a session's log is
// in the audit trail from the same transaction; other events are not.
func testAuditOfCommit(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	CreateSession(t, st, Session("s1", T0))
	decided, err := engine.NewEvent(engine.ApprovalDecided{
		ApprovalID: "a1", By: "policy:read-only", Decision: engine.DecisionApprove, DecisionID: "d1", Tool: "github_comment", Policy: "read-only",
	})
	if err != nil {
		t.Fatal(err)
	}
	voted, err := engine.NewEvent(engine.ApprovalVoted{ApprovalID: "a2", By: "U7", Key: "ops", Count: 1, Required: 2})
	if err != nil {
		t.Fatal(err)
	}
	decided.ID, voted.ID = "e1", "e2"
	Commit(t, st, engine.Commit{SessionID: "s1", Now: T0, Events: []engine.Event{userMessage("m1", "hi"), decided, voted}})
	all, err := st.AuditEntries(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("audit entries after the commit = %+v, want 2", all)
	}
	if e := all[0]; e.Action != engine.EventApprovalDecided || e.Actor != "policy:read-only" || e.Target != "a1" {
		t.Errorf("decision entry = %+v", e)
	}
	if e := all[1]; e.Action != engine.EventApprovalVoted || e.Actor != "U7 via key:ops" || e.Target != "a2" {
		t.Errorf("vote entry = %+v", e)
	}
	if b := store.VerifyChain(all); b != nil {
		t.Error(b)
	}
}

// testAuditPrune: pruning removes the oldest entries in bounded batches,
// keeps a linked suffix, and the chain goes on from the head.
func testAuditPrune(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st := open()
	for i := range 6 {
		if _, err := st.AppendAudit(ctx, auditRecord(i, T0.Add(time.Duration(i)*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	n, err := st.PruneAudit(ctx, T0.Add(4*time.Hour), 3)
	if err != nil || n != 3 {
		t.Fatalf("PruneAudit(limit 3) = %d, %v; want 3", n, err)
	}
	n, err = st.PruneAudit(ctx, T0.Add(4*time.Hour), 3)
	if err != nil || n != 1 {
		t.Fatalf("second PruneAudit = %d, %v; want 1", n, err)
	}
	if _, err := st.AppendAudit(ctx, auditRecord(9, T0.Add(9*time.Hour))); err != nil {
		t.Fatal(err)
	}
	all, err := st.AuditEntries(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Seq != 5 || all[2].Seq != 7 {
		t.Fatalf("after pruning, entries %v; want seqs 5..7", all)
	}
	if b := store.VerifyChain(all); b != nil {
		t.Errorf("VerifyChain of what is kept: %v", b)
	}
}
