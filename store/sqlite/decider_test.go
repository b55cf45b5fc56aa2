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
	got := queryPlan(t, st.read, `SELECT id FROM approvals WHERE `+strings.Join(where, " AND ")+` ORDER BY created_at DESC, id DESC LIMIT 100`, args...)
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
