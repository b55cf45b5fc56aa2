package store

import (
	"context"
	"fmt"
	"time"

	"brain/engine"
)

// MemoryFile is one file of an agent's memory (the memory tool's
// /memories tree). Scope names whose memory it is ("agent:NAME",
// "channel:slack:T:C", "person:slack:T:U"); Path is the file's path
// inside the scope, without a leading slash ("notes/deploy.md").
// Directories are not stored: a directory is the common prefix of its
// files.
type MemoryFile struct {
	Scope   string
	Path    string
	Content string
	// Size is len(Content) in bytes.
	Size int64
	// Version is 1 when the file is created and grows by one with every
	// change: a writer names the version it read (MemoryWrite.Expect), so
	// a change made meanwhile is never overwritten.
	Version   int64
	UpdatedAt time.Time
	// UpdatedBy and SessionID say who made the last change, from which
	// session ("" for an operator's edit).
	UpdatedBy string
	SessionID string
}

// MemoryScope is one scope's totals, which the scope's limits bound.
type MemoryScope struct {
	Scope string
	Files int
	Bytes int64
}

// MemoryChange is one entry of a scope's history: what changed a file.
type MemoryChange struct {
	ID    int64
	Scope string
	Path  string
	// Op is what changed it: the memory command (create, str_replace,
	// insert, delete, rename) or an operator's edit or delete.
	Op string
	// Version is the file's version after the change; 0 when it was
	// deleted (or renamed away).
	Version   int64
	Diff      string
	By        string
	SessionID string
	At        time.Time
}

// MemoryWrite is one change of a MemoryCommit.
type MemoryWrite struct {
	Path string
	// Expect is the version the file must have now: 0 means it must not
	// exist. A file that does not match is engine.ErrConflict and the
	// whole commit is refused.
	Expect int64
	// Content replaces the file's content (or creates it), unless Delete.
	Content string
	Delete  bool
	// Op and Diff are recorded in the history.
	Op   string
	Diff string
}

// MemoryCommit changes files of one scope in one transaction, each only if
// it still has the version its writer read, and records each change in
// the scope's history.
type MemoryCommit struct {
	Scope     string
	Now       time.Time
	By        string
	SessionID string
	Writes    []MemoryWrite
	// MaxFiles and MaxBytes bound the scope (0: no bound). A commit that
	// leaves the scope over a bound it grew is refused with an
	// engine.Error of code too_large, and nothing is written; a commit
	// that shrinks an oversized scope passes.
	MaxFiles int
	MaxBytes int64
}

// Memory keeps agents' memory files, their totals per scope and their
// history. A missing file is engine.ErrNotFound.
type Memory interface {
	// MemoryFile returns one file.
	MemoryFile(ctx context.Context, scope, path string) (MemoryFile, error)
	// MemoryFiles returns every file of the scope, by path.
	MemoryFiles(ctx context.Context, scope string) ([]MemoryFile, error)
	// MemoryScopes returns every scope that holds a file, by scope.
	MemoryScopes(ctx context.Context) ([]MemoryScope, error)
	// CommitMemory applies c atomically (see MemoryCommit).
	CommitMemory(ctx context.Context, c MemoryCommit) error
	// MemoryHistory returns the scope's changes, newest first: of the
	// file at path, or of every file when path is "". limit <= 0 means
	// 100.
	MemoryHistory(ctx context.Context, scope, path string, limit int) ([]MemoryChange, error)
}

// CheckMemoryCommit reports a commit CommitMemory must refuse before any
// I/O, with an error matching engine.ErrInvariant.
func CheckMemoryCommit(c MemoryCommit) error {
	switch {
	case c.Scope == "":
		return invariant("commit memory: empty scope")
	case c.Now.IsZero():
		return invariant("commit memory %s: zero time", c.Scope)
	case len(c.Writes) == 0:
		return invariant("commit memory %s: no writes", c.Scope)
	}
	seen := map[string]bool{}
	for _, w := range c.Writes {
		switch {
		case w.Path == "":
			return invariant("commit memory %s: empty path", c.Scope)
		case w.Expect < 0:
			return invariant("commit memory %s: negative version for %s", c.Scope, w.Path)
		case w.Delete && w.Expect == 0:
			return invariant("commit memory %s: delete of %s names no version", c.Scope, w.Path)
		case seen[w.Path]:
			return invariant("commit memory %s: %s written twice", c.Scope, w.Path)
		}
		seen[w.Path] = true
	}
	return nil
}

// MemoryHistoryLimit is the default and largest MemoryHistory limit.
const MemoryHistoryLimit = 100

// HistoryLimit bounds a MemoryHistory limit.
func HistoryLimit(limit int) int {
	if limit <= 0 || limit > MemoryHistoryLimit {
		return MemoryHistoryLimit
	}
	return limit
}

// MemoryConflict is the error of a write whose file changed since its
// writer read it: an engine.Error of code conflict, which callers tell
// apart with engine.ErrConflict.
func MemoryConflict(scope, path string, expect, found int64) error {
	var msg string
	switch {
	case expect == 0:
		msg = fmt.Sprintf("memory file %s %s already exists (version %d)", scope, path, found)
	case found == 0:
		msg = fmt.Sprintf("memory file %s %s no longer exists (it was at version %d when read)", scope, path, expect)
	default:
		msg = fmt.Sprintf("memory file %s %s changed since it was read (version %d, now %d)", scope, path, expect, found)
	}
	return &engine.Error{Code: engine.CodeConflict, Message: msg}
}

// CheckMemoryLimits refuses a commit that leaves its scope over a limit
// the commit grew: an engine.Error of code too_large.
func CheckMemoryLimits(c MemoryCommit, before, after MemoryScope) error {
	if c.MaxFiles > 0 && after.Files > c.MaxFiles && after.Files > before.Files {
		return &engine.Error{Code: engine.CodeTooLarge, Message: fmt.Sprintf(
			"memory scope %s would hold %d files; its limit is %d", c.Scope, after.Files, c.MaxFiles)}
	}
	if c.MaxBytes > 0 && after.Bytes > c.MaxBytes && after.Bytes > before.Bytes {
		return &engine.Error{Code: engine.CodeTooLarge, Message: fmt.Sprintf(
			"memory scope %s would hold %d bytes; its limit is %d", c.Scope, after.Bytes, c.MaxBytes)}
	}
	return nil
}
