package main

import (
	"bytes"
	"database/sql"
	"flag"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "github.com/mattn/go-sqlite3" // the driver brain's SQLite store uses

	"brain/webhooks/slackhook"
)

const durableFloorMode = "durable-floor"

// serveDurableFloor is the durable floor: the floor's verifier plus an
// insert of each verified body into a SQLite file (WAL, synchronous=FULL),
// acknowledged only after the commit holding it. Requests that arrive
// while a commit runs share the next one (group commit). It is the least
// any intake that acks only what is on disk can cost here: no parsing,
// no dedupe, one statement per event.
func serveDurableFloor(args []string) error {
	fs := flag.NewFlagSet(durableFloorMode, flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address")
	path := fs.String("db", "", "SQLite file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	q := url.Values{"_journal_mode": {"WAL"}, "_synchronous": {"FULL"}, "_txlock": {"immediate"}}
	db, err := sql.Open("sqlite3", "file:"+*path+"?"+q.Encode())
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS inbox (id INTEGER PRIMARY KEY, body BLOB NOT NULL)`); err != nil {
		return err
	}
	type req struct {
		body []byte
		done chan error
	}
	reqs := make(chan req, 1024)
	go func() {
		for first := range reqs {
			batch := []req{first}
		collect:
			for len(batch) < 256 {
				select {
				case r := <-reqs:
					batch = append(batch, r)
				default:
					break collect
				}
			}
			bodies := make([][]byte, len(batch))
			for i, r := range batch {
				bodies[i] = r.body
			}
			err := commitBodies(db, bodies)
			for _, r := range batch {
				r.done <- err
			}
		}
	}()
	return http.ListenAndServe(*listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<20))
		if slackhook.Verify(signingSecret, r.Header, buf.Bytes(), time.Now()) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		done := make(chan error, 1)
		reqs <- req{body: buf.Bytes(), done: done}
		if <-done != nil {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
}

// commitBodies inserts a batch's bodies in one transaction.
func commitBodies(db *sql.DB, bodies [][]byte) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	st, err := tx.Prepare(`INSERT INTO inbox (body) VALUES (?)`)
	if err != nil {
		return err
	}
	for _, b := range bodies {
		if _, err := st.Exec(b); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func startDurableFloor(e *env) (*target, error) {
	db := filepath.Join(e.dir, "durable-floor.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(db + suffix) // a fresh file per run
	}
	return startSelf("durable floor (+SQLite commit)", durableFloorMode, "-db", db)
}
