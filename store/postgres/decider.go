package postgres

import (
	"strings"

	"brain/engine"
)

// deciderCondition adds the condition of engine.ApprovalDecider: the
// approvals of the agents d approves for, of unguarded agents in sessions
// d.StartedBy started, and of sessions of d.Origins. Each session is read
// by its primary key, per pending approval, not scanned.
func deciderCondition(c *conditions, d *engine.ApprovalDecider) {
	if d == nil {
		return
	}
	var alts []string
	if len(d.ApproverOf) > 0 {
		alts = append(alts, "agent = ANY ("+c.arg(d.ApproverOf)+")")
	}
	if d.StartedBy != "" {
		cond := "EXISTS (SELECT 1 FROM sessions s WHERE s.id = approvals.session_id AND s.started_by = " + c.arg(d.StartedBy) + ")"
		if len(d.Guarded) > 0 {
			cond = "(NOT agent = ANY (" + c.arg(d.Guarded) + ") AND " + cond + ")"
		}
		alts = append(alts, cond)
	}
	if len(d.Origins) > 0 {
		origins := make([]string, len(d.Origins))
		for i, o := range d.Origins {
			origins[i] = string(o)
		}
		alts = append(alts, "EXISTS (SELECT 1 FROM sessions s WHERE s.id = approvals.session_id AND s.origin = ANY ("+c.arg(origins)+"))")
	}
	if len(alts) == 0 {
		c.add("false") // may decide nothing
		return
	}
	c.add("(" + strings.Join(alts, " OR ") + ")")
}
