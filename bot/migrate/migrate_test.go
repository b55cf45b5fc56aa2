package migrate_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/mattn/go-sqlite3"

	"brain/bot/migrate"
	"brain/engine"
	"brain/store"
	"brain/store/postgres"
	"brain/store/postgres/pgtest"
	"brain/store/sqlite"
	"brain/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var t0 = storetest.T0

// fill writes sessions of every kind, as the bridges and the engine
// leave them, into st: an API session with a committed result and
// idempotency keys, a Slack thread with a pending approval and inbox rows
// (done, failed and pending), a Linear session awaiting an answer with its
// workspace token and parked input, a schedule's session with its runs, and
// a decided, applied approval.
func fill(t *testing.T, st *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	msg := func(id, text string) engine.Event {
		return engine.Event{ID: id, Type: engine.EventUserMessage, Data: json.RawMessage(`{"text":` + jsonString(text) + `}`)}
	}

	api := storetest.Session("api-1", t0)
	_, _, err := st.CreateSession(ctx, api, "create-key-1")
	must(err)
	storetest.Commit(t, st, engine.Commit{SessionID: "api-1", InputKey: "input-key-1", Events: []engine.Event{msg("api-1-e1", "hello")}})
	storetest.Commit(t, st, engine.Commit{SessionID: "api-1", Now: t0.Add(time.Second),
		Update: func(s *engine.Session) error {
			s.InputCursor, s.Checkpoint, s.Result = 1, 2, json.RawMessage(`{"answer":42}`)
			return nil
		},
		Result: &engine.ResultRecord{CallID: "c1", TurnID: "t1", Data: json.RawMessage(`{"answer":42}`), ReportedAt: t0.Add(time.Second)},
		Events: []engine.Event{{ID: "api-1-e2", Type: engine.EventAgentMessage, TurnID: "t1", Data: json.RawMessage(`{"text":"hi — \"there\""}`)}}})

	slack := storetest.Session("slack-1", t0.Add(time.Minute))
	slack.Origin, slack.ThreadKey, slack.StartedBy = engine.OriginSlack, "slack:T1:C1:1700000000.000100", "U42"
	storetest.CreateSession(t, st, slack)
	pending := storetest.Approval("appr-pending", t0.Add(time.Minute))
	storetest.Commit(t, st, engine.Commit{SessionID: "slack-1", NewApproval: &pending, Events: []engine.Event{msg("slack-1-e1", "make a ticket")}})
	applied := storetest.Approval("appr-applied", t0.Add(2*time.Minute))
	storetest.Commit(t, st, engine.Commit{SessionID: "slack-1", NewApproval: &applied})
	_, _, err = st.CommitApproval(ctx, engine.ApprovalCommit{ID: "appr-applied", Now: t0.Add(3 * time.Minute),
		Update: func(a *engine.Approval) error {
			a.Status, a.DecisionID, a.DecidedBy, a.DecidedAt = engine.ApprovalApplied, "d1", "U42", t0.Add(3*time.Minute)
			a.Output, a.Attempts = json.RawMessage(`{"issue":"ENG-1"}`), 1
			return nil
		},
		Events: []engine.Event{{ID: "slack-1-e2", Type: engine.EventAgentMessage, Data: json.RawMessage(`{"text":"done"}`)}}})
	must(err)
	must(st.SetDeliveryCursor(ctx, t0, engine.OriginSlack, "slack-1", 2))
	must(st.SetApprovalMessage(ctx, t0, "slack", "appr-pending", "1700000000.000200"))
	must(st.SetThreadContext(ctx, t0, slack.ThreadKey, "posted by schedule nightly"))
	_, err = st.RecordInbound(ctx, t0, []store.Inbound{
		{Source: "slack", ThreadKey: slack.ThreadKey, Kind: "message", Payload: []byte(`{"event":{"text":"one"}}`), DedupeKeys: []string{"Ev1", "C1:1.1"}},
		{Source: "slack", ThreadKey: slack.ThreadKey, Kind: "message", Payload: []byte(`{"event":{"text":"two"}}`), DedupeKeys: []string{"Ev2"}},
		{Source: "slack", ThreadKey: slack.ThreadKey, Kind: "message", Payload: []byte(`{"event":{"text":"three"}}`), DedupeKeys: []string{"Ev3"}},
	})
	must(err)
	must(st.FinishInbound(ctx, t0.Add(time.Second), []store.Finished{{ID: 1}, {ID: 2, Err: "channel archived"}}))

	lin := storetest.Session("linear-1", t0.Add(2*time.Minute))
	lin.Origin, lin.ThreadKey, lin.Interactive = engine.OriginLinear, "linear:as-1", true
	storetest.CreateSession(t, st, lin)
	q := engine.Question{ID: "q1", Text: "Which team?", Options: []engine.Option{{Label: "Eng", Value: "eng"}}, CallID: "c9", TurnID: "t9", AskedAt: t0}
	qj, _ := json.Marshal(q)
	storetest.Commit(t, st, engine.Commit{SessionID: "linear-1",
		Update: func(s *engine.Session) error { s.Status, s.Question = engine.StatusAwaitingInput, qj; return nil },
		Events: []engine.Event{msg("linear-1-e1", "triage this")}})
	must(st.SetPostedQuestion(ctx, t0, "slack", "linear-1", store.PostedQuestion{MessageRef: "1700000000.000300", Question: q}))
	must(st.SetDeliveryCursor(ctx, t0, engine.OriginLinear, "linear-1", 1))
	must(st.SaveLinearToken(ctx, store.LinearToken{OrganizationID: "org-1", OrganizationName: "Acme", URLKey: "acme", AppUserID: "app-1",
		AccessToken: "lin_oauth_access", RefreshToken: "lin_refresh", ExpiresAt: t0.Add(24 * time.Hour), Scope: "read,write",
		Status: store.LinearConnected, UpdatedAt: t0}))
	must(st.SaveLinearToken(ctx, store.LinearToken{OrganizationID: "org-2", OrganizationName: "Gone", URLKey: "gone", AppUserID: "app-2",
		AccessToken: "x", RefreshToken: "y", Status: store.LinearRevoked, Problem: "refresh refused", UpdatedAt: t0}))
	must(st.SaveOAuthState(ctx, t0, "state-1", t0.Add(time.Hour)))
	must(st.SetLinearSessionOrganization(ctx, t0, "as-1", "org-1"))
	must(st.ParkLinearInbound(ctx, t0, "org-2", store.Inbound{Source: "linear", ThreadKey: "linear:as-2", Kind: "prompted", Payload: []byte{0xff, 0x00, 'x'}}))

	// The agent's memory: two scopes, a file written twice, one deleted.
	mem := func(scope, by, session string, at time.Duration, w ...store.MemoryWrite) {
		t.Helper()
		must(st.CommitMemory(ctx, store.MemoryCommit{Scope: scope, Now: t0.Add(at), By: by, SessionID: session, Writes: w}))
	}
	const ops = "channel:slack:T1:C1"
	mem(ops, "U42", "slack-1", time.Second, store.MemoryWrite{Path: "deploys.md", Content: "Tuesdays", Op: "create", Diff: "+Tuesdays"},
		store.MemoryWrite{Path: "notes/old.md", Content: "x", Op: "create", Diff: "+x"})
	mem(ops, "U42", "slack-1", 2*time.Second, store.MemoryWrite{Path: "deploys.md", Expect: 1, Content: "Tuesdays — \"never Fridays\"", Op: "str_replace", Diff: "-Tuesdays\n+Tuesdays — \"never Fridays\""})
	mem(ops, "ops-key", "", 3*time.Second, store.MemoryWrite{Path: "notes/old.md", Expect: 1, Delete: true, Op: "operator_delete", Diff: "-x"})
	mem("agent:default", "U42", "slack-1", 4*time.Second, store.MemoryWrite{Path: "style.md", Content: "Short answers.", Op: "create", Diff: "+Short answers."})

	sched := storetest.Session("sched-1", t0.Add(3*time.Minute))
	sched.Origin, sched.Interactive, sched.StartedBy, sched.Status = engine.OriginSchedule, false, "", engine.StatusInterrupted
	storetest.CreateSession(t, st, sched)
	for i, run := range []store.ScheduleRun{
		{Schedule: "nightly", FireTime: t0, Trigger: store.TriggerCron, SessionID: "sched-1", Status: store.RunRunning, CreatedAt: t0, UpdatedAt: t0},
		{Schedule: "nightly", FireTime: t0.Add(time.Hour), Trigger: store.TriggerManual, Status: store.RunRunning, CreatedAt: t0, UpdatedAt: t0},
	} {
		if ok, err := st.ClaimRun(ctx, run); err != nil || !ok {
			t.Fatalf("ClaimRun %d = %v, %v", i, ok, err)
		}
	}
	if ok, err := st.FinishRun(ctx, store.ScheduleRun{Schedule: "nightly", FireTime: t0, Trigger: store.TriggerCron, SessionID: "sched-1",
		Status: store.RunCompleted, Outcome: "all green", CreatedAt: t0, UpdatedAt: t0.Add(time.Minute)}); err != nil || !ok {
		t.Fatalf("FinishRun = %v, %v", ok, err)
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// reader is what both stores offer that the comparison reads.
type reader interface {
	engine.Store
	store.Inbox
	store.Runs
	store.ChannelState
	store.LinearTokens
	store.Threads
	store.Memory
}

// view is everything the engine, the bridges and the scheduler read back.
func view(t *testing.T, st reader) map[string]any {
	t.Helper()
	ctx := context.Background()
	v := map[string]any{}
	put := func(name string, val any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v[name] = val
	}
	sessions, err := st.Sessions(ctx, engine.SessionFilter{})
	put("sessions", sessions, err)
	if len(sessions) != 4 {
		t.Fatalf("sessions = %d, want 4", len(sessions))
	}
	for _, s := range sessions {
		evs, err := st.Events(ctx, s.ID, 0, 0)
		put("events "+s.ID, evs, err)
		res, err := st.Results(ctx, s.ID)
		put("results "+s.ID, res, err)
	}
	pendingInput, err := st.Sessions(ctx, engine.SessionFilter{PendingInput: true})
	put("pending input", pendingInput, err)
	byKey, err := st.SessionByKey(ctx, "create-key-1")
	put("session by key", byKey, err)
	byThread, err := st.SessionByThread(ctx, "linear:as-1")
	put("session by thread", byThread, err)
	approvals, err := st.Approvals(ctx, engine.ApprovalFilter{})
	put("approvals", approvals, err)
	inbox, err := st.PendingInbound(ctx, "slack", 10)
	put("pending inbox", inbox, err)
	runs, err := st.Runs(ctx, "nightly", 10)
	put("runs", runs, err)
	running, err := st.RunningRuns(ctx, "nightly")
	put("running runs", running, err)
	cur, err := st.DeliveryCursor(ctx, engine.OriginSlack, "slack-1")
	put("slack cursor", cur, err)
	cur, err = st.DeliveryCursor(ctx, engine.OriginLinear, "linear-1")
	put("linear cursor", cur, err)
	ref, ok, err := st.ApprovalMessage(ctx, "slack", "appr-pending")
	put("approval message", []any{ref, ok}, err)
	pq, ok, err := st.PostedQuestion(ctx, "slack", "linear-1")
	put("posted question", []any{pq, ok}, err)
	note, ok, err := st.ThreadContext(ctx, "slack:T1:C1:1700000000.000100")
	put("thread context", []any{note, ok}, err)
	toks, err := st.LinearTokens(ctx)
	put("linear tokens", toks, err)
	org, ok, err := st.LinearSessionOrganization(ctx, "as-1")
	put("linear session org", []any{org, ok}, err)
	parked, err := st.ParkedLinearInbound(ctx, "org-2")
	put("parked", parked, err)
	scopes, err := st.MemoryScopes(ctx)
	put("memory scopes", scopes, err)
	if len(scopes) != 2 {
		t.Fatalf("memory scopes = %+v, want 2", scopes)
	}
	for _, sc := range scopes {
		files, err := st.MemoryFiles(ctx, sc.Scope)
		put("memory files "+sc.Scope, files, err)
		hist, err := st.MemoryHistory(ctx, sc.Scope, "", 0)
		put("memory history "+sc.Scope, hist, err)
	}
	return v
}

func sourceDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "brain.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fill(t, st)
	return path
}

func TestToPostgres_EveryKindOfSession(t *testing.T) {
	ctx := context.Background()
	path := sourceDB(t)
	dsn := pgtest.NewDatabase(t)
	var out bytes.Buffer
	counts, err := migrate.ToPostgres(ctx, migrate.Options{From: path, DSN: dsn, Out: &out})
	if err != nil {
		t.Fatalf("ToPostgres: %v\n%s", err, out.String())
	}
	want := map[string]int64{"sessions": 4, "events": 5, "idempotency_keys": 2, "results": 1, "approvals": 2,
		"schedule_runs": 2, "inbox": 3, "inbox_keys": 4, "delivery_cursors": 2, "approval_messages": 1,
		"posted_questions": 1, "thread_contexts": 1, "linear_tokens": 2, "oauth_states": 1,
		"linear_agent_sessions": 1, "linear_parked_inbound": 1,
		"memory_files": 2, "memory_scopes": 2, "memory_history": 5}
	for _, c := range counts {
		if c.Source != c.Target {
			t.Errorf("%s: source %d, target %d", c.Table, c.Source, c.Target)
		}
		if w, ok := want[c.Table]; ok && c.Source != w {
			t.Errorf("%s: %d rows, want %d (the fixture wrote them)", c.Table, c.Source, w)
		}
		delete(want, c.Table)
		if !strings.Contains(out.String(), c.Table) {
			t.Errorf("printed counts lack %s:\n%s", c.Table, out.String())
		}
	}
	if len(want) > 0 {
		t.Errorf("tables not copied: %v", want)
	}

	src, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	before, after := view(t, src), view(t, dst)
	for name, b := range before {
		if !reflect.DeepEqual(b, after[name]) {
			t.Errorf("%s differs after the copy:\nsqlite:   %+v\npostgres: %+v", name, b, after[name])
		}
	}

	// The copied keys and sequences keep working: a repeated input is a
	// duplicate, the OAuth state is consumed once, new rows get new ids.
	res, err := dst.Commit(ctx, engine.Commit{SessionID: "api-1", Now: t0, InputKey: "input-key-1", Events: []engine.Event{{ID: "again", Type: engine.EventUserMessage, Data: json.RawMessage(`{}`)}}})
	if err != nil || !res.Duplicate {
		t.Errorf("repeated input key on the target = %+v, %v; want a duplicate", res, err)
	}
	if ok, err := dst.ConsumeOAuthState(ctx, t0, "state-1"); err != nil || !ok {
		t.Errorf("ConsumeOAuthState = %v, %v; want the copied state", ok, err)
	}
	dup, err := dst.RecordInbound(ctx, t0, []store.Inbound{{Source: "slack", ThreadKey: "k", Kind: "message", Payload: []byte("x"), DedupeKeys: []string{"Ev2"}},
		{Source: "slack", ThreadKey: "k", Kind: "message", Payload: []byte("y"), DedupeKeys: []string{"Ev9"}}})
	if err != nil || !reflect.DeepEqual(dup, []bool{true, false}) {
		t.Errorf("RecordInbound on the target = %v, %v; want the copied key a duplicate", dup, err)
	}
	inbox, _ := dst.PendingInbound(ctx, "slack", 10)
	// Ids follow the copied ones (PostgreSQL may leave gaps).
	if n := len(inbox); n != 2 || inbox[0].ID != 3 || inbox[1].ID <= 3 {
		t.Errorf("pending inbox after a new item = %+v; want id 3, then a newer one", inbox)
	}
	storetest.Commit(t, dst, engine.Commit{SessionID: "api-1", Result: &engine.ResultRecord{CallID: "c2", Data: json.RawMessage(`1`), ReportedAt: t0}})
	if rs, err := dst.Results(ctx, "api-1"); err != nil || len(rs) != 2 || rs[1].CallID != "c2" {
		t.Errorf("Results after a new one = %+v, %v", rs, err)
	}

	// The copied memory keeps its versions: an edit of what was read
	// passes, one of an older version is refused, and the history goes on
	// after the copied entries.
	edit := func(expect int64) error {
		return dst.CommitMemory(ctx, store.MemoryCommit{Scope: "channel:slack:T1:C1", Now: t0.Add(time.Hour), By: "U7", SessionID: "slack-1",
			Writes: []store.MemoryWrite{{Path: "deploys.md", Expect: expect, Content: "Wednesdays", Op: "create"}}})
	}
	if err := edit(1); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("an edit of version 1 on the target = %v, want a conflict (the copy is at version 2)", err)
	}
	if err := edit(2); err != nil {
		t.Errorf("an edit of version 2 on the target: %v", err)
	}
	if h, err := dst.MemoryHistory(ctx, "channel:slack:T1:C1", "deploys.md", 0); err != nil || len(h) != 3 || h[0].Version != 3 || h[0].ID <= h[1].ID {
		t.Errorf("history after the edit = %+v, %v", h, err)
	}

	// A second run refuses the filled target; --replace copies again.
	if _, err := migrate.ToPostgres(ctx, migrate.Options{From: path, DSN: dsn}); !errors.Is(err, postgres.ErrNotEmpty) {
		t.Errorf("second run = %v, want ErrNotEmpty", err)
	}
	if _, err := migrate.ToPostgres(ctx, migrate.Options{From: path, DSN: dsn, Replace: true}); err != nil {
		t.Errorf("run with Replace: %v", err)
	}
	if evs, _ := dst.Events(ctx, "api-1", 0, 0); len(evs) != 2 {
		t.Errorf("after Replace, api-1 has %d events; want the source's 2", len(evs))
	}
}

func TestToPostgres_RefusesWhatItCannotCopy(t *testing.T) {
	ctx := context.Background()
	path := sourceDB(t)
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	dsn := pgtest.NewDatabase(t)
	_, err = migrate.ToPostgres(ctx, migrate.Options{From: path, DSN: dsn})
	if err == nil || !strings.Contains(err.Error(), "notes") {
		t.Fatalf("ToPostgres with an unknown table = %v; want an error naming it", err)
	}
	assertEmpty(t, dsn)

	if _, err := migrate.ToPostgres(ctx, migrate.Options{From: filepath.Join(t.TempDir(), "missing.db"), DSN: dsn}); err == nil {
		t.Error("ToPostgres from a missing file: want an error, not an empty copy")
	}
}

// TestToPostgres_CountMismatchRollsBack makes the target lose rows (a
// trigger drops one inbox row) and expects the count check to fail the
// whole copy.
func TestToPostgres_CountMismatchRollsBack(t *testing.T) {
	ctx := context.Background()
	path := sourceDB(t)
	dsn := pgtest.NewDatabase(t)
	st, err := postgres.Open(ctx, dsn) // creates the schema
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE FUNCTION drop_two() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN IF NEW.id = 2 THEN RETURN NULL; END IF; RETURN NEW; END $$;
		CREATE TRIGGER lose BEFORE INSERT ON inbox FOR EACH ROW EXECUTE FUNCTION drop_two()`); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err = migrate.ToPostgres(ctx, migrate.Options{From: path, DSN: dsn, Out: &out})
	if !errors.Is(err, migrate.ErrCountMismatch) || !strings.Contains(err.Error(), "inbox: 3 in the source, 2 in the target") {
		t.Fatalf("ToPostgres = %v; want a count mismatch on inbox", err)
	}
	if !strings.Contains(out.String(), "DIFFERS") {
		t.Errorf("printed counts do not mark the difference:\n%s", out.String())
	}
	assertEmpty(t, dsn)
}

func assertEmpty(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tables, err := st.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if n, err := st.Count(ctx, tb.Name); err != nil || n != 0 {
			t.Errorf("target %s has %d rows (%v) after a failed copy; want none", tb.Name, n, err)
		}
	}
}
