package store

import (
	"fmt"

	"brain/engine"
)

// CheckStart refuses a session start the drivers must not write: an
// invalid session, or a commit that is invalid or for another session.
func CheckStart(st engine.SessionStart) error {
	if err := CheckNewSession(st.Session); err != nil {
		return err
	}
	for _, c := range st.Commits {
		if c.SessionID != st.Session.ID {
			return fmt.Errorf("%w: start of session %s carries a commit for %s", engine.ErrInvariant, st.Session.ID, c.SessionID)
		}
		if err := CheckCommit(c); err != nil {
			return err
		}
	}
	return nil
}
