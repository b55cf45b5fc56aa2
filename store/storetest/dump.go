package storetest

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Dumped is everything a database holds, for tests that look for what
// must not be there (a credential in plain text, an erased person's words):
// every row of every table as text and, for SQLite, the bytes of its
// files.
type Dumped struct {
	// Rows is one "table: row" line per row of every table (SQLite's
	// full-text index's shadow tables included).
	Rows string
	// Raw is the bytes of the SQLite file and every file beside it (the
	// WAL included); nil for PostgreSQL.
	Raw []byte
}

// Holds says whether s is anywhere in the dump: in a row as text or as
// hex (PostgreSQL dumps bytea columns, inbox payloads, in hex), or in the
// files' bytes.
func (d Dumped) Holds(s string) bool {
	return strings.Contains(d.Rows, s) || strings.Contains(d.Rows, hex.EncodeToString([]byte(s))) ||
		strings.Contains(string(d.Raw), s)
}

// DumpSQLite dumps the SQLite database at path, read-only. The caller
// links the sqlite3 database/sql driver (store/sqlite does).
func DumpSQLite(tb testing.TB, path string) Dumped {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	tables, err := column(db, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	for _, table := range tables {
		rs, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			tb.Fatal(err)
		}
		cols, _ := rs.Columns()
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				tb.Fatal(err)
			}
			b.WriteString(table + ":")
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, " %v", v)
			}
			b.WriteString("\n")
		}
		if err := rs.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	files, _ := filepath.Glob(path + "*")
	sort.Strings(files)
	var raw []byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		raw = append(raw, data...)
	}
	return Dumped{Rows: b.String(), Raw: raw}
}

// DumpPostgres dumps every table of the schema of the PostgreSQL database
// at dsn, each row as JSON.
func DumpPostgres(tb testing.TB, dsn string) Dumped {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`)
	if err != nil {
		tb.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	for _, table := range tables {
		rows, err := conn.Query(ctx, `SELECT row_to_json(t)::text FROM `+pgx.Identifier{table}.Sanitize()+` t`)
		if err != nil {
			tb.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			tb.Fatal(err)
		}
		for _, l := range lines {
			b.WriteString(table + ": " + l + "\n")
		}
	}
	return Dumped{Rows: b.String()}
}

func column(db *sql.DB, query string) ([]string, error) {
	rows, err := db.Query(query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
