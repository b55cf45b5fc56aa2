package sqlite

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
	if d.StartedBy != "" || d.Person != "" {
		var guard string
		if len(d.Guarded) > 0 {
			guard = "agent NOT IN (" + marks(len(d.Guarded)) + ") AND "
			for _, a := range d.Guarded {
				args = append(args, a)
			}
		}
		var started string
		started, args = startedCondition(args, d)
		alts = append(alts, "("+guard+"EXISTS (SELECT 1 FROM sessions s WHERE s.id = approvals.session_id AND "+started+"))")
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

// startedCondition is "session s was started by d.StartedBy, or by an
// identity of d.Person": the starter's person found as the engine finds it
// (engine.StarterSurfaces: a console session's starter is looked up in the
// console, then Slack, then the API, the first link winning).
func startedCondition(args []any, d *engine.ApprovalDecider) (string, []any) {
	var who []string
	if d.StartedBy != "" {
		who = append(who, "s.started_by = ?")
		args = append(args, d.StartedBy)
	}
	if d.Person != "" {
		console := engine.StarterSurfaces(engine.OriginConsole)
		lookups := make([]string, len(console))
		for i := range console {
			lookups[i] = "(SELECT pi.person_id FROM person_identities pi WHERE pi.surface = ? AND pi.external_id = s.started_by)"
		}
		args = append(args, d.Person, string(engine.OriginConsole))
		for _, surface := range console {
			args = append(args, surface)
		}
		who = append(who, "(s.started_by <> '' AND ? = CASE WHEN s.origin = ? THEN "+coalesce(lookups)+
			" ELSE (SELECT pi.person_id FROM person_identities pi WHERE pi.surface = s.origin AND pi.external_id = s.started_by) END)")
	}
	return "(" + strings.Join(who, " OR ") + ")", args
}

// coalesce is the first non-null of exprs, evaluated in order (SQLite's
// coalesce needs two arguments).
func coalesce(exprs []string) string {
	if len(exprs) == 1 {
		return exprs[0]
	}
	return "coalesce(" + strings.Join(exprs, ", ") + ")"
}

// marks is n comma-separated placeholders.
func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
