package store

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// The schema migrations of a Store. Each store embeds its own SQL files
// (its dialect) and applies them in its own transaction; reading the files
// and choosing which to apply is the same for every store, so it lives
// here, beside the rest of the store contract (commitcheck.go).

// Migration is one embedded schema file, named NNNN_description.sql.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// LoadMigrations reads the *.sql files of dir in fsys, ordered by version.
// A file not named NNNN_description.sql, or two files with one version,
// are refused.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	ms := make([]Migration, 0, len(names))
	seen := make(map[int]string)
	for _, name := range names {
		base := path.Base(name)
		prefix, _, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", base)
		}
		v, err := strconv.Atoi(prefix)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive version", base)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("migration %s: version %d already used by %s", base, v, other)
		}
		seen[v] = base
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// PendingMigrations is the migrations of ms not in applied, in version
// order. Every one missing is applied, not only those above the highest
// applied: versions need not be consecutive, and a build may bring one
// numbered below a version the database already has. A version this build
// does not know means a newer build wrote the schema, and an older one must
// not write to it.
func PendingMigrations(ms []Migration, applied map[int]bool) ([]Migration, error) {
	known := map[int]bool{}
	var todo []Migration
	for _, m := range ms {
		known[m.Version] = true
		if !applied[m.Version] {
			todo = append(todo, m)
		}
	}
	for v := range applied {
		if !known[v] {
			return nil, fmt.Errorf("migrate: database schema version %d is newer than this build (it does not know that migration)", v)
		}
	}
	return todo, nil
}
