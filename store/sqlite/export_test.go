package sqlite_test

import (
	"context"
	"slices"
	"testing"

	"brain/engine"
	"brain/store"
	"brain/store/sqlite"
	"brain/store/storetest"
)

func TestTables_EveryDataTable(t *testing.T) {
	st, _ := openStore(t)
	tables, err := st.Tables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name)
		if len(tb.Columns) == 0 {
			t.Errorf("table %s: no columns", tb.Name)
		}
	}
	for _, want := range []string{"sessions", "events", "idempotency_keys", "results", "approvals", "schedule_runs",
		"inbox", "inbox_keys", "delivery_cursors", "approval_messages", "posted_questions", "thread_contexts",
		"linear_tokens", "oauth_states", "linear_agent_sessions", "linear_parked_inbound"} {
		if !slices.Contains(names, want) {
			t.Errorf("Tables = %v, missing %s", names, want)
		}
	}
	for _, not := range []string{"schema_migrations", "sqlite_sequence"} {
		if slices.Contains(names, not) {
			t.Errorf("Tables = %v, want no %s", names, not)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("Tables = %v, want name order", names)
	}
	i := slices.IndexFunc(tables, func(tb sqlite.Table) bool { return tb.Name == "events" })
	if got, want := tables[i].Columns, []string{"session_id", "seq", "id", "type", "turn_id", "created_at", "data"}; !slices.Equal(got, want) {
		t.Errorf("events columns = %v, want %v", got, want)
	}
}

func TestSnapshot_ReadsOneMoment(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	storetest.CreateSession(t, st, storetest.Session("s1", storetest.T0))
	storetest.Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{
		{ID: "e1", Type: engine.EventUserMessage, Data: []byte(`{"text":"hi"}`)},
	}})
	if _, err := st.RecordInbound(ctx, storetest.T0, []store.Inbound{{Source: "slack", ThreadKey: "k", Kind: "message", Payload: []byte{0, 1, 2}}}); err != nil {
		t.Fatal(err)
	}

	sn, err := st.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	// Written after the snapshot began: not seen by it.
	storetest.Commit(t, st, engine.Commit{SessionID: "s1", Events: []engine.Event{{ID: "e2", Type: engine.EventUserMessage, Data: []byte(`{}`)}}})

	if n, err := sn.Count(ctx, "events"); err != nil || n != 1 {
		t.Errorf("Count(events) = %d, %v; want 1 (the snapshot's moment)", n, err)
	}
	rows, err := sn.Rows(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	var got [][]any
	for rows.Next() {
		v, _ := rows.Values()
		got = append(got, slices.Clone(v))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if len(got) != 1 || got[0][2] != "e1" || got[0][1] != int64(1) || got[0][6] != `{"text":"hi"}` {
		t.Errorf("events rows = %v", got)
	}

	rows, err = sn.Rows(ctx, "inbox")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("inbox: no row (%v)", rows.Err())
	}
	v, _ := rows.Values()
	if v[0] != int64(1) || v[1] != "slack" {
		t.Errorf("inbox row = %v", v)
	}
	if _, err := sn.Rows(ctx, "schema_migrations"); err == nil {
		t.Error("Rows(schema_migrations): want an error, it is not a data table")
	}
	if _, err := sn.Count(ctx, `sessions"; DROP TABLE sessions; --`); err == nil {
		t.Error("Count of a made-up table: want an error")
	}
}

func TestSchemaVersion(t *testing.T) {
	st, _ := openStore(t)
	v, err := st.SchemaVersion(context.Background())
	if err != nil || v < 6 {
		t.Errorf("SchemaVersion = %d, %v; want >= 6", v, err)
	}
}
