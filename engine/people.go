package engine

import (
	"context"
	"strings"

	"brain/tools"
)

// People resolves a platform identity to the person it is linked to
// (store.People behind it), so one human is one voter on every surface:
// an approvers entry "person:alice" admits each of Alice's identities,
// her Slack vote and her GitHub vote count once, and forbid_self refuses
// all of the requester's identities, not only the one they asked with.
type People interface {
	// PersonOf returns the id of the person linked to the identity
	// (surface, id), or "" when it is linked to nobody.
	PersonOf(ctx context.Context, surface, id string) (string, error)
}

// PersonPrefix marks an approvers entry that names a person.
const PersonPrefix = "person:"

// Surfaces of identities, as store.People names them.
const (
	SurfaceSlack   = "slack"
	SurfaceLinear  = "linear"
	SurfaceGitHub  = "github"
	SurfaceConsole = "console"
	SurfaceAPI     = "api"
)

// deciderSurface is where d.By is an identity: the surface the decision
// came from, else the API for key holders, else the surface of the
// session's origin.
func deciderSurface(d Decision, s Session) string {
	switch {
	case d.Surface != "":
		return d.Surface
	case d.ViaAPI:
		return SurfaceAPI
	}
	return string(s.Origin)
}

// personOf is the person linked to by on surface, "" when none (or no
// People configured). A lookup that fails is logged and links nobody:
// the identity then counts as itself, as before people existed.
func (e *Engine) personOf(ctx context.Context, surface, by string) string {
	if e.people == nil || by == "" || surface == "" {
		return ""
	}
	p, err := e.people.PersonOf(ctx, surface, by)
	if err != nil {
		e.log.Warn("person lookup failed", tools.LogWho, by, tools.LogErr, err)
		return ""
	}
	return p
}

// requesterPerson is the person who started s, looked up on the
// surfaces of its origin (StarterSurfaces; a store's decider filter
// repeats this lookup in SQL).
func (e *Engine) requesterPerson(ctx context.Context, s Session) string {
	for _, surface := range StarterSurfaces(s.Origin) {
		if p := e.personOf(ctx, surface, s.StartedBy); p != "" {
			return p
		}
	}
	return ""
}

// personEntry reports whether an approvers entry names person.
func personEntry(entry, person string) bool {
	id, ok := strings.CutPrefix(entry, PersonPrefix)
	return ok && person != "" && id == person
}
