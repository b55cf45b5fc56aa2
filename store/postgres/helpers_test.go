package postgres_test

import (
	"context"
	"testing"

	"brain/store/postgres"
	"brain/store/postgres/pgtest"
)

// One throwaway PostgreSQL cluster serves every test of the package; each
// test gets a database of its own (pgtest.NewDatabase).
func TestMain(m *testing.M) { pgtest.Main(m) }

// openAt opens a Store on dsn, closed when tb ends.
func openAt(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	st, err := postgres.Open(context.Background(), dsn)
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
