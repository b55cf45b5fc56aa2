package postgres_test

import (
	"testing"

	"brain/store"
	"brain/store/postgres/pgtest"
	"brain/store/storetest"
)

// TestStore_Conformance runs the store suite on a real PostgreSQL with the
// production migrations, each test on a fresh database; a second handle
// on a database is a second brain process sharing it (its own pool, only
// PostgreSQL's locking between them).
func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() store.Store {
		dsn := pgtest.NewDatabase(t)
		return func() store.Store { return openAt(t, dsn) }
	})
}
