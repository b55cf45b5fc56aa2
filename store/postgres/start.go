package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"brain/engine"
	"brain/store"
)

var _ engine.SessionStarter = (*Store)(nil)

// StartSessions creates sessions with their first commits in one
// transaction; see engine.SessionStarter. Each start runs in a savepoint
// of its own, so one that fails, or finds its session existing (whose
// claimed key is then given back), is undone alone.
func (s *Store) StartSessions(ctx context.Context, starts []engine.SessionStart) ([]engine.SessionStarted, error) {
	out := make([]engine.SessionStarted, len(starts))
	for i, st := range starts {
		out[i].Err = store.CheckStart(st)
		if out[i].Err != nil {
			continue
		}
		for _, c := range st.Commits {
			if err := commitText(c); err != nil {
				out[i].Err = err
				break
			}
		}
	}
	err := s.writeTx(ctx, func(tx pgx.Tx) error {
		for i, st := range starts {
			if out[i].Err != nil {
				continue
			}
			sp, err := tx.Begin(ctx) // a savepoint
			if err != nil {
				return err
			}
			r, err := startTx(ctx, sp, st)
			switch {
			case err != nil:
				r = engine.SessionStarted{Err: interpretError("start session "+st.Session.ID, err)}
				fallthrough
			case !r.Created:
				if err := sp.Rollback(ctx); err != nil {
					return err
				}
			default:
				if err := sp.Commit(ctx); err != nil {
					return err
				}
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
func startTx(ctx context.Context, tx pgx.Tx, st engine.SessionStart) (engine.SessionStarted, error) {
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
