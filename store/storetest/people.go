package storetest

import (
	"context"
	"errors"
	"testing"

	"brain/engine"
	"brain/store"
)

func testPeople(t *testing.T, open func() store.Store) {
	ctx := context.Background()
	st, other := open(), open()
	if _, err := other.Person(ctx, "alice"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Person before any = %v, want ErrNotFound", err)
	}
	for _, p := range []store.Person{{ID: "bob", Name: "Bob", UpdatedAt: T0}, {ID: "alice", Name: "Al", UpdatedAt: T0}} {
		if err := st.SavePerson(ctx, p); err != nil {
			t.Fatalf("SavePerson(%s): %v", p.ID, err)
		}
	}
	if err := st.SavePerson(ctx, store.Person{ID: "alice", Name: "Alice", UpdatedAt: T0.Add(1)}); err != nil {
		t.Fatal(err)
	}
	if err := st.SavePerson(ctx, store.Person{UpdatedAt: T0}); !errors.Is(err, engine.ErrInvariant) {
		t.Errorf("SavePerson without an id = %v, want ErrInvariant", err)
	}
	slackA := store.Identity{Surface: store.SurfaceSlack, ExternalID: "U1"}
	ghA := store.Identity{Surface: store.SurfaceGitHub, ExternalID: "alice-gh"}
	for _, id := range []store.Identity{slackA, ghA} {
		if err := st.LinkIdentity(ctx, T0, "alice", id); err != nil {
			t.Fatalf("LinkIdentity(%s): %v", id, err)
		}
	}
	if err := st.LinkIdentity(ctx, T0, "nobody", slackA); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("LinkIdentity to an unknown person = %v, want ErrNotFound", err)
	}
	got, err := other.PersonByIdentity(ctx, slackA)
	if err != nil || got.ID != "alice" || got.Name != "Alice" || len(got.Identities) != 2 || !got.CreatedAt.Equal(T0) {
		t.Fatalf("PersonByIdentity = %+v, %v", got, err)
	}
	// One identity, one person: linking it to Bob moves it.
	if err := other.LinkIdentity(ctx, T0, "bob", ghA); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.PersonByIdentity(ctx, ghA); got.ID != "bob" {
		t.Errorf("identity after the move belongs to %q, want bob", got.ID)
	}
	all, err := st.People(ctx)
	if err != nil || len(all) != 2 || all[0].ID != "alice" || len(all[0].Identities) != 1 || len(all[1].Identities) != 1 {
		t.Fatalf("People = %+v, %v", all, err)
	}
	if err := st.UnlinkIdentity(ctx, slackA); err != nil {
		t.Fatal(err)
	}
	if _, err := other.PersonByIdentity(ctx, slackA); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("unlinked identity still finds %v", err)
	}
	// Erasing a person takes their identities and connections.
	if err := st.SaveConnection(ctx, connection("c-bob", "bob", "github")); err != nil {
		t.Fatal(err)
	}
	if err := other.ErasePerson(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PersonByIdentity(ctx, ghA); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("identity of an erased person: %v", err)
	}
	if _, err := st.ConnectionByID(ctx, "c-bob"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("connection of an erased person: %v", err)
	}
	if err := other.ErasePerson(ctx, "bob"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("erasing twice = %v, want ErrNotFound", err)
	}
}
