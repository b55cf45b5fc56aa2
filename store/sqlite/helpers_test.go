package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"brain/store/sqlite"
)

// The store-generic tests are store/storetest's (conformance_test.go runs
// them); the SQLite-specific ones (migrations, options, the file's
// columns, benchmarks) use its fixtures and these helpers.

func openStore(tb testing.TB) (*sqlite.Store, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "brain.db")
	return openAt(tb, path), path
}

// openAt opens the file at path, closed when tb ends.
func openAt(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return st
}
