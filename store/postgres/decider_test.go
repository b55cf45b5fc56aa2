package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"brain/engine"
	"brain/store/postgres/pgtest"
)

// TestApprovals_DeciderPlan: the decider filter reads each pending
// approval's session and its starter's links by primary key; neither
// sessions nor person_identities is scanned.
func TestApprovals_DeciderPlan(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	st, err := Open(ctx, dsn) // migrates
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The tables are empty: only with sequential scans priced out does
	// the plan show whether an index is used.
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	d := engine.ApprovalDecider{ApproverOf: []string{"deploy"}, Guarded: []string{"deploy"}, StartedBy: "alice-key", Person: "alice",
		Origins: []engine.Origin{engine.OriginAPI, engine.OriginConsole}}
	var q conditions
	statusIn(&q, []engine.ApprovalStatus{engine.ApprovalPending})
	deciderCondition(&q, &d)
	rows, err := conn.Query(ctx, `EXPLAIN SELECT id FROM approvals WHERE `+strings.Join(q.where, " AND ")+` ORDER BY created_at DESC, id DESC LIMIT 100`, q.args...)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(plan, "\n")
	for _, scan := range []string{"Seq Scan on sessions", "Seq Scan on person_identities"} {
		if strings.Contains(got, scan) {
			t.Errorf("plan:\n%s\nwant no %q", got, scan)
		}
	}
	if !strings.Contains(got, "person_identities_pkey") {
		t.Errorf("plan:\n%s\nwant person_identities by its primary key", got)
	}
	t.Log(got)
}
