package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"brain/engine"
	"brain/store"
	"brain/store/storetest"
)

// TestStore_Conformance runs the store suite on real files with the
// production migrations; a second handle on a file is a second brain
// process sharing it (separate pools, only SQLite's locking between them).
func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() store.Store {
		path := filepath.Join(t.TempDir(), "brain.db")
		return func() store.Store { return openAt(t, path) }
	})
}

// TestStore_UndecidedApprovalColumn pins the file format: an approval
// without a decision stores decided_at as the empty string (the column is
// NOT NULL), and reads back as the zero time.
func TestStore_UndecidedApprovalColumn(t *testing.T) {
	st, path := openStore(t)
	storetest.CreateSession(t, st, storetest.Session("s1", storetest.T0))
	a := storetest.Approval("a1", storetest.T0)
	storetest.Commit(t, st, engine.Commit{SessionID: "s1", NewApproval: &a})

	var decidedAt string
	if err := rawDB(t, path).QueryRow(`SELECT decided_at FROM approvals WHERE id = 'a1'`).Scan(&decidedAt); err != nil {
		t.Fatal(err)
	}
	if decidedAt != "" {
		t.Errorf("decided_at column of an undecided approval = %q, want empty", decidedAt)
	}
	got, err := st.Approval(context.Background(), "a1")
	if err != nil || !got.DecidedAt.IsZero() {
		t.Errorf("Approval = DecidedAt %v, %v; want zero", got.DecidedAt, err)
	}
}
