package postgres

import (
	"strings"

	"brain/engine"
)

// deciderCondition adds the condition of engine.ApprovalDecider: the
// approvals of the agents d approves for, of unguarded agents in sessions
// d.StartedBy or an identity linked to d.Person started, and of sessions
// of d.Origins. Each session is read by its primary key, per pending
// approval, and its starter's person by person_identities' primary key
// (surface, external_id): nothing is scanned.
func deciderCondition(c *conditions, d *engine.ApprovalDecider) {
	if d == nil {
		return
	}
	var alts []string
	if len(d.ApproverOf) > 0 {
		alts = append(alts, "agent = ANY ("+c.arg(d.ApproverOf)+")")
	}
	if d.StartedBy != "" || d.Person != "" {
		var guard string
		if len(d.Guarded) > 0 {
			guard = "NOT agent = ANY (" + c.arg(d.Guarded) + ") AND "
		}
		alts = append(alts, "("+guard+"EXISTS (SELECT 1 FROM sessions s WHERE s.id = approvals.session_id AND "+startedCondition(c, d)+"))")
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

// startedCondition is "session s was started by d.StartedBy, or by an
// identity of d.Person": the starter's person found as the engine finds it
// (engine.StarterSurfaces: a console session's starter is looked up in the
// console, then Slack, then the API, the first link winning).
func startedCondition(c *conditions, d *engine.ApprovalDecider) string {
	var who []string
	if d.StartedBy != "" {
		who = append(who, "s.started_by = "+c.arg(d.StartedBy))
	}
	if d.Person != "" {
		var lookups []string
		for _, surface := range engine.StarterSurfaces(engine.OriginConsole) {
			lookups = append(lookups, "(SELECT pi.person_id FROM person_identities pi WHERE pi.surface = "+c.arg(surface)+" AND pi.external_id = s.started_by)")
		}
		who = append(who, "(s.started_by <> '' AND "+c.arg(d.Person)+" = CASE WHEN s.origin = "+c.arg(string(engine.OriginConsole))+
			" THEN COALESCE("+strings.Join(lookups, ", ")+")"+
			" ELSE (SELECT pi.person_id FROM person_identities pi WHERE pi.surface = s.origin AND pi.external_id = s.started_by) END)")
	}
	return "(" + strings.Join(who, " OR ") + ")"
}
