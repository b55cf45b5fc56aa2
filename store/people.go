package store

import (
	"context"
	"time"
)

// Identity surfaces: where a person is known. A platform may add its own.
const (
	SurfaceSlack   = "slack"   // a Slack user id (U...)
	SurfaceLinear  = "linear"  // a Linear user id
	SurfaceGitHub  = "github"  // a GitHub login
	SurfaceConsole = "console" // a console sign-in name
	SurfaceAPI     = "api"     // the person an API key acts for
)

// Person is one human across the surfaces: the identities linked to them
// make approvals, policies and forbid_self count them once everywhere.
type Person struct {
	ID         string
	Name       string
	Identities []Identity
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Identity is a person's id on one surface.
type Identity struct {
	Surface    string
	ExternalID string
}

// String is the identity as approvals record a voter: "surface:id".
func (i Identity) String() string { return i.Surface + ":" + i.ExternalID }

// Validate reports a person SavePerson must refuse.
func (p Person) Validate() error {
	switch {
	case p.ID == "":
		return invariant("save person: empty id")
	case p.UpdatedAt.IsZero():
		return invariant("save person %s: zero updated time", p.ID)
	}
	return nil
}

// People keeps the people and the identities linked to them. A missing
// person is engine.ErrNotFound.
type People interface {
	// SavePerson creates the person or renames them (identities are kept).
	SavePerson(ctx context.Context, p Person) error
	// Person returns one person with their identities.
	Person(ctx context.Context, id string) (Person, error)
	// People returns every person with their identities, by id.
	People(ctx context.Context) ([]Person, error)
	// PersonByIdentity returns the person an identity is linked to.
	PersonByIdentity(ctx context.Context, id Identity) (Person, error)
	// LinkIdentity links the identity to the person, moving it from any
	// other person (one identity, one person). The person must exist.
	LinkIdentity(ctx context.Context, now time.Time, personID string, id Identity) error
	// UnlinkIdentity forgets the link; an unknown identity is not an error.
	UnlinkIdentity(ctx context.Context, id Identity) error
	// ErasePerson deletes the person, their identities and connections.
	ErasePerson(ctx context.Context, id string) error
}
