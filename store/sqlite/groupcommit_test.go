package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// openWriter opens a file with the writer connection's settings and one
// table, for the shared-transaction tests.
func openWriter(t *testing.T) (*groupWriter, *sql.DB) {
	t.Helper()
	opts, err := Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", dsn(filepath.Join(t.TempDir(), "g.db"), opts, true))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return newGroupWriter(db), db
}

func insert(k string) func(tx *sql.Tx) error {
	return func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO t (k) VALUES (?)`, k)
		return err
	}
}

func keys(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.Query(`SELECT k FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out[k] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// firstOfTwo runs first as a group's first writer in a goroutine and
// returns once it holds the connection; first finishes only when a second
// writer waits behind it, so the two share one transaction. Its result
// arrives on the channel.
func firstOfTwo(w *groupWriter, first func(tx *sql.Tx) error) <-chan error {
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- w.run(context.Background(), func(tx *sql.Tx) error {
			close(started)
			for w.waiting.Load() == 0 {
				runtime.Gosched()
			}
			return first(tx)
		})
	}()
	<-started
	return done
}

func TestGroupWriter_ConcurrentWritesShareCommits(t *testing.T) {
	w, db := openWriter(t)
	const n = 400
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := string(rune('a'+i%26)) + string(rune('0'+i/26))
			var err error
			if i%10 == 0 {
				// Every tenth write fails after writing: its row must go,
				// the others' stay.
				err = w.run(context.Background(), func(tx *sql.Tx) error {
					if err := insert("bad" + k)(tx); err != nil {
						return err
					}
					return errors.New("refused")
				})
				if err == nil || err.Error() != "refused" {
					errs <- err
				}
				return
			}
			if err = w.run(context.Background(), insert(k)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("write: %v", err)
	}
	got := keys(t, db)
	if len(got) != n-n/10 {
		t.Errorf("rows = %d, want %d", len(got), n-n/10)
	}
	for k := range got {
		if len(k) > 3 && k[:3] == "bad" {
			t.Errorf("failed write kept: %s", k)
		}
	}
	if c := w.commits.Load(); c >= n {
		t.Errorf("%d commits for %d writes: none shared", c, n)
	}
	t.Logf("%d writes in %d commits", n, w.commits.Load())
}

func TestGroupWriter_FollowerWaitsForCommit(t *testing.T) {
	w, db := openWriter(t)
	done := firstOfTwo(w, insert("first"))
	// The second writer is the last of the group: it commits for both.
	if err := w.run(context.Background(), insert("second")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := keys(t, db); !got["first"] || !got["second"] {
		t.Errorf("rows = %v", got)
	}
	if c := w.commits.Load(); c != 1 {
		t.Errorf("commits = %d, want 1 shared", c)
	}
}

func TestGroupWriter_BrokenTransactionFailsTheWholeGroup(t *testing.T) {
	w, db := openWriter(t)
	done := firstOfTwo(w, insert("first"))
	// SQLite rolls a transaction back on its own (an interrupted
	// statement, a full disk): the first writer, which wrote fine, must
	// not be told its write is done.
	err := w.run(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`ROLLBACK`)
		return err
	})
	if err == nil {
		t.Fatal("the writer that broke the transaction got no error")
	}
	if err := <-done; err == nil {
		t.Fatal("the first writer was told its rolled-back write is done")
	}
	if got := keys(t, db); len(got) != 0 {
		t.Errorf("rows = %v, want none", got)
	}
	// The writer goes on with a new transaction.
	if err := w.run(context.Background(), insert("after")); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, db); !got["after"] {
		t.Errorf("rows = %v", got)
	}
}

func TestGroupWriter_PanicUndoesOnlyItsWrite(t *testing.T) {
	w, db := openWriter(t)
	done := firstOfTwo(w, insert("first"))
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the fn's panic", p)
			}
		}()
		_ = w.run(context.Background(), func(tx *sql.Tx) error {
			_ = insert("panicked")(tx)
			panic("boom")
		})
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := keys(t, db)
	if !got["first"] || got["panicked"] {
		t.Errorf("rows = %v, want first only", got)
	}
	if err := w.run(context.Background(), insert("after")); err != nil {
		t.Fatal(err)
	}
}

func TestGroupWriter_CancelledBeforeRunWritesNothing(t *testing.T) {
	w, db := openWriter(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.run(ctx, insert("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if got := keys(t, db); len(got) != 0 {
		t.Errorf("rows = %v", got)
	}
}
