package sqlite

import (
	"strings"

	"brain/engine"
)

// deciderCondition adds the condition of engine.ApprovalDecider: the
// approvals of the agents d approves for, of unguarded agents in sessions
// d.StartedBy started, and of sessions of d.Origins. Each session is read
// by its primary key, per pending approval, not scanned.
func deciderCondition(where []string, args []any, d *engine.ApprovalDecider) ([]string, []any) {
	if d == nil {
		return where, args
	}
	var alts []string
	if len(d.ApproverOf) > 0 {
		alts = append(alts, "agent IN ("+marks(len(d.ApproverOf))+")")
		for _, a := range d.ApproverOf {
			args = append(args, a)
		}
	}
	if d.StartedBy != "" {
		cond := "EXISTS (SELECT 1 FROM sessions s WHERE s.id = approvals.session_id AND s.started_by = ?)"
		if len(d.Guarded) > 0 {
			cond = "(agent NOT IN (" + marks(len(d.Guarded)) + ") AND " + cond + ")"
			for _, a := range d.Guarded {
				args = append(args, a)
			}
		}
		alts = append(alts, cond)
		args = append(args, d.StartedBy)
	}
	if len(d.Origins) > 0 {
		alts = append(alts, "EXISTS (SELECT 1 FROM sessions s WHERE s.id = approvals.session_id AND s.origin IN ("+marks(len(d.Origins))+"))")
		for _, o := range d.Origins {
			args = append(args, string(o))
		}
	}
	if len(alts) == 0 {
		return append(where, "0"), args // may decide nothing
	}
	return append(where, "("+strings.Join(alts, " OR ")+")"), args
}

// marks is n comma-separated placeholders.
func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
