package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"brain/engine"
	"brain/store"
)

var _ engine.SessionStarter = (*Store)(nil)

// StartSessions creates sessions with their first commits in one
// transaction; see engine.SessionStarter. Each start runs in a savepoint
// of its own, so one that fails (its commit's Update refuses, its id is
// taken) is undone alone and reported in its SessionStarted.Err.
func (s *Store) StartSessions(ctx context.Context, starts []engine.SessionStart) ([]engine.SessionStarted, error) {
	out := make([]engine.SessionStarted, len(starts))
	for i, st := range starts {
		out[i].Err = store.CheckStart(st)
	}
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		for i, st := range starts {
			if out[i].Err != nil {
				continue
			}
			if _, err := tx.ExecContext(ctx, `SAVEPOINT start`); err != nil {
				return err
			}
			r, err := startTx(ctx, tx, st)
			if err != nil {
				if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO start`); rerr != nil {
					return rerr
				}
				r = engine.SessionStarted{Err: interpretError("start session "+st.Session.ID, err)}
			}
			if _, err := tx.ExecContext(ctx, `RELEASE start`); err != nil {
				return err
			}
			out[i] = r
		}
		return nil
	})
	if err != nil {
		return nil, interpretError(fmt.Sprintf("start %d sessions", len(starts)), err)
	}
	return out, nil
}

// startTx creates one session and applies its commits inside tx.
func startTx(ctx context.Context, tx *sql.Tx, st engine.SessionStart) (engine.SessionStarted, error) {
	sess, created, err := createSessionTx(ctx, tx, newSessionRow(st.Session), st.IdempotencyKey)
	if err != nil || !created {
		return engine.SessionStarted{Session: sess}, err
	}
	r := engine.SessionStarted{Session: sess, Created: true}
	for _, c := range st.Commits {
		res, err := commitTx(ctx, tx, c)
		if err != nil {
			return r, err
		}
		r.Session = res.Session
		r.Results = append(r.Results, res)
	}
	return r, nil
}
