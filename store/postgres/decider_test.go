package postgres

import (
	"context"
	"strings"
	"testing"

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
	d := engine.ApprovalDecider{ApproverOf: []string{"deploy"}, Guarded: []string{"deploy"}, StartedBy: "alice-key", Person: "alice",
		Origins: []engine.Origin{engine.OriginAPI, engine.OriginConsole}}
	var q conditions
	statusIn(&q, []engine.ApprovalStatus{engine.ApprovalPending})
	deciderCondition(&q, &d)
	got := pgtest.QueryPlan(t, dsn, `SELECT id FROM approvals WHERE `+strings.Join(q.where, " AND ")+` ORDER BY created_at DESC, id DESC LIMIT 100`, q.args...)
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
