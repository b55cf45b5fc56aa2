package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"brain/store"
)

var _ store.People = (*Store)(nil)

// SavePerson creates the person or renames them.
func (s *Store) SavePerson(ctx context.Context, p store.Person) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = p.UpdatedAt
	}
	_, err := s.write.ExecContext(ctx,
		`INSERT INTO people (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)
		 ON CONFLICT (id) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at`,
		p.ID, p.Name, formatTime(p.CreatedAt), formatTime(p.UpdatedAt))
	if err != nil {
		return fmt.Errorf("save person %s: %w", p.ID, err)
	}
	return nil
}

// Person returns one person with their identities.
func (s *Store) Person(ctx context.Context, id string) (store.Person, error) {
	ps, err := s.people(ctx, s.read, `WHERE id = ?`, id)
	if err != nil {
		return store.Person{}, fmt.Errorf("get person %s: %w", id, err)
	}
	if len(ps) == 0 {
		return store.Person{}, notFound("person", id)
	}
	return ps[0], nil
}

// People returns every person, by id.
func (s *Store) People(ctx context.Context) ([]store.Person, error) {
	ps, err := s.people(ctx, s.read, ``)
	if err != nil {
		return nil, fmt.Errorf("list people: %w", err)
	}
	return ps, nil
}

// PersonByIdentity returns the person an identity is linked to.
func (s *Store) PersonByIdentity(ctx context.Context, id store.Identity) (store.Person, error) {
	var pid string
	err := s.read.QueryRowContext(ctx,
		`SELECT person_id FROM person_identities WHERE surface = ? AND external_id = ?`, id.Surface, id.ExternalID).Scan(&pid)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.Person{}, notFound("person with identity", id.String())
	case err != nil:
		return store.Person{}, fmt.Errorf("find person of %s: %w", id, err)
	}
	return s.Person(ctx, pid)
}

func (s *Store) people(ctx context.Context, q queryer, where string, args ...any) ([]store.Person, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name, created_at, updated_at FROM people `+where+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	var out []store.Person
	index := map[string]int{}
	for rows.Next() {
		var p store.Person
		var created, updated string
		if err := rows.Scan(&p.ID, &p.Name, &created, &updated); err != nil {
			rows.Close()
			return nil, err
		}
		if p.CreatedAt, err = parseTime(created); err == nil {
			p.UpdatedAt, err = parseTime(updated)
		}
		if err != nil {
			rows.Close()
			return nil, err
		}
		index[p.ID] = len(out)
		out = append(out, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	idRows, err := q.QueryContext(ctx, `SELECT person_id, surface, external_id FROM person_identities ORDER BY surface, external_id`)
	if err != nil {
		return nil, err
	}
	defer idRows.Close()
	for idRows.Next() {
		var pid string
		var id store.Identity
		if err := idRows.Scan(&pid, &id.Surface, &id.ExternalID); err != nil {
			return nil, err
		}
		if i, ok := index[pid]; ok {
			out[i].Identities = append(out[i].Identities, id)
		}
	}
	return out, idRows.Err()
}

// LinkIdentity links the identity to the person, moving it from another.
func (s *Store) LinkIdentity(ctx context.Context, now time.Time, personID string, id store.Identity) error {
	if id.Surface == "" || id.ExternalID == "" {
		return invariant("link identity to %s: empty surface or id", personID)
	}
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM people WHERE id = ?`, personID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return notFound("person", personID)
		} else if err != nil {
			return fmt.Errorf("link identity to %s: %w", personID, err)
		}
		_, err := tx.ExecContext(ctx,
			`INSERT INTO person_identities (surface, external_id, person_id, created_at) VALUES (?, ?, ?, ?)
			 ON CONFLICT (surface, external_id) DO UPDATE SET person_id = excluded.person_id, created_at = excluded.created_at`,
			id.Surface, id.ExternalID, personID, formatTime(now))
		if err != nil {
			return fmt.Errorf("link identity %s to %s: %w", id, personID, err)
		}
		return nil
	})
}

// UnlinkIdentity forgets the link.
func (s *Store) UnlinkIdentity(ctx context.Context, id store.Identity) error {
	if _, err := s.write.ExecContext(ctx,
		`DELETE FROM person_identities WHERE surface = ? AND external_id = ?`, id.Surface, id.ExternalID); err != nil {
		return fmt.Errorf("unlink identity %s: %w", id, err)
	}
	return nil
}

// ErasePerson deletes the person, their identities (cascade) and their
// connections, scrubbed (erase.go): a connection's token is not left in
// the write-ahead log's old frames or the file's free pages.
func (s *Store) ErasePerson(ctx context.Context, id string) error {
	return s.scrubbed(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM people WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("erase person %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("person", id)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM connections WHERE person_id = ?`, id); err != nil {
			return fmt.Errorf("erase connections of %s: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM connect_flows WHERE person_id = ?`, id); err != nil {
			return fmt.Errorf("erase connect flows of %s: %w", id, err)
		}
		return nil
	})
}
