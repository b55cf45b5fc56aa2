package tools

import (
	"context"
	"errors"
	"fmt"
)

// Identity is who is behind a call on one surface: the session's origin
// ("slack", "linear", "github", "console", "api", "schedule") and the
// person's id there (a Slack user id, a GitHub login, ...). The zero
// Identity is nobody.
type Identity struct {
	Surface    string
	ExternalID string
}

// IsZero reports whether the identity names nobody.
func (i Identity) IsZero() bool { return i.ExternalID == "" }

// String is "surface:id", as approvals record a voter.
func (i Identity) String() string { return i.Surface + ":" + i.ExternalID }

// SurfaceSchedule is the surface of calls a schedule made: nobody asked.
const SurfaceSchedule = "schedule"

// People resolves identities to brain's people (the bot layer passes one
// backed by the store to the tool families that act as a person).
type People interface {
	// PersonOf returns the id of the person the identity is linked to;
	// ok is false when it is linked to nobody.
	PersonOf(ctx context.Context, id Identity) (personID string, ok bool, err error)
}

// Acting-as modes (config acts_as): whose credential a tool uses.
const (
	ActsAsApp       = "app"       // the app's own (today's behaviour)
	ActsAsRequester = "requester" // the person who asked
	ActsAsApprover  = "approver"  // the person whose vote decided the approval
)

// Actor is the identity a call acts as under mode: the requester, or
// the approver (in an approval's apply; the requester elsewhere, where
// nobody voted). ActsAsApp has none.
func (c Call) Actor(mode string) Identity {
	switch mode {
	case ActsAsRequester:
		return c.Requester
	case ActsAsApprover:
		if !c.Approver.IsZero() {
			return c.Approver
		}
		return c.Requester
	}
	return Identity{}
}

// ConnectionRequired is a call refused before dispatch because the
// person it acts as has no usable connection to Provider (never
// connected, revoked, or short of scope). Nothing was sent. The bot
// layer sees it (errors.As) and sends that person a connect link where
// they asked.
type ConnectionRequired struct {
	Tool     string
	Provider string   // "mcp:<id>"
	Person   string   // brain's person id; "" when the identity is linked to nobody
	Identity Identity // who the call acts as
	Scope    string   // the scope the server asked for, if it said
	// Problem says why a connection the person had stopped working (its
	// refresh token expired, the provider refused it), fit to show.
	Problem string
}

func (e *ConnectionRequired) Error() string {
	who := e.Identity.ExternalID
	if who == "" {
		who = "the person who asked"
	}
	return fmt.Sprintf("%s: %s has no connection to %s (%s); nothing was sent. "+
		"They were sent a link to connect it; once connected, the call can be retried", e.Tool, who, e.Provider, e.Why())
}

// Why is the problem, or the reasons a connection may be unusable.
func (e *ConnectionRequired) Why() string {
	if e.Problem != "" {
		return e.Problem
	}
	return "missing, revoked or short of scope"
}

// AsConnectionRequired finds a ConnectionRequired in err's chain.
func AsConnectionRequired(err error) (*ConnectionRequired, bool) {
	var cr *ConnectionRequired
	ok := errors.As(err, &cr)
	return cr, ok
}
