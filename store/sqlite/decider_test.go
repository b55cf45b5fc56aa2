package sqlite

import (
	"strings"
	"testing"

	"brain/engine"
)

// TestApprovals_DeciderPlan: the decider filter reads each pending
// approval's session and its starter's links by primary key; neither
// sessions nor person_identities is scanned, however many there are.
func TestApprovals_DeciderPlan(t *testing.T) {
	st := openTemp(t)
	d := engine.ApprovalDecider{ApproverOf: []string{"deploy"}, Guarded: []string{"deploy"}, StartedBy: "alice-key", Person: "alice",
		Origins: []engine.Origin{engine.OriginAPI, engine.OriginConsole}}
	where, args := statusIn(nil, nil, []engine.ApprovalStatus{engine.ApprovalPending})
	where, args = deciderCondition(where, args, &d)
	query := `EXPLAIN QUERY PLAN SELECT id FROM approvals WHERE ` + strings.Join(where, " AND ") + ` ORDER BY created_at DESC, id DESC LIMIT 100`
	rows, err := st.read.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(plan, "; ")
	for _, scan := range []string{"SCAN s", "SCAN pi"} {
		if strings.Contains(got, scan) {
			t.Errorf("plan = %s; want no %q", got, scan)
		}
	}
	if !strings.Contains(got, "SEARCH pi USING PRIMARY KEY (surface=? AND external_id=?)") {
		t.Errorf("plan = %s; want person_identities by its primary key", got)
	}
	t.Log(got)
}
