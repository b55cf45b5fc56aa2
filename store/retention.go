package store

import (
	"context"
	"encoding/json"
	"time"

	"brain/engine"
)

// Retention is what the retention job and a person's erasure delete and
// rewrite with. Every call is one short transaction, so a turn committing
// beside it waits at most for one batch.
type Retention interface {
	// PruneSessions deletes up to limit events of the sessions whose last
	// activity (UpdatedAt) is before before and that are not running,
	// oldest first. A session whose events are all gone goes in the same
	// transaction with everything kept about it: results, approvals and
	// their platform messages, search rows, delivery cursors, posted
	// questions, input keys and its schedule run's link. A session that
	// became active again meanwhile is left alone.
	PruneSessions(ctx context.Context, before time.Time, limit int) (SessionsPruned, error)
	// Compact gives the space deleted rows left back to the file system
	// where the database does not do it on its own (SQLite with
	// auto_vacuum=incremental frees up to pages pages; 0 is all; on
	// PostgreSQL autovacuum does it and Compact does nothing). ok is false
	// when the file cannot give space back until an operator runs VACUUM
	// once (an SQLite file made before auto_vacuum was set). freed is how
	// many pages went (0 where the database does it).
	Compact(ctx context.Context, pages int) (freed int, ok bool, err error)
	// EraseAuthor replaces, in every session, the text of the messages
	// any of authors wrote (user.message events) with marker, drops their
	// files and answers, and deletes the copies kept beside the log: search
	// rows, inbox payloads, parked platform deliveries, feedback. The
	// events themselves stay (with their ids, types and times), so the
	// log keeps its shape. It returns how many messages it rewrote and
	// the hashes of the files they named (for the file store).
	EraseAuthor(ctx context.Context, authors []string, marker string) (Erased, error)
	// EraseMemoryScopes deletes every file, version history and total of
	// the memory scopes named, and returns how many files went.
	EraseMemoryScopes(ctx context.Context, scopes []string) (int, error)
}

// SessionsPruned is one PruneSessions batch: the sessions that went
// (whole, in the order they went) and the events deleted (of those and of
// sessions still being deleted).
type SessionsPruned struct {
	Sessions []string
	Events   int
}

// Erased is what EraseAuthor changed.
type Erased struct {
	Messages int
	Files    []string
	Sessions int
}

// EraseMessage is the data of a user.message event with its text replaced
// by marker, its files dropped and an answer's value and text replaced,
// when one of authors wrote it; changed is false (data untouched) when
// none did or the data is not a message. files are the stored files it
// named. Drivers call it for every message EraseAuthor looks at.
func EraseMessage(data []byte, authors map[string]bool, marker string) (out []byte, files []string, changed bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return data, nil, false
	}
	var author string
	if json.Unmarshal(m["author"], &author) != nil || !authors[author] {
		return data, nil, false
	}
	var refs []engine.FileRef
	if json.Unmarshal(m["files"], &refs) == nil {
		for _, r := range refs {
			if r.Hash != "" {
				files = append(files, r.Hash)
			}
		}
	}
	delete(m, "files")
	m["text"], _ = json.Marshal(marker)
	if raw, ok := m["answer"]; ok {
		var a map[string]json.RawMessage
		if json.Unmarshal(raw, &a) == nil {
			delete(a, "value")
			a["text"], _ = json.Marshal(marker)
			m["answer"], _ = json.Marshal(a)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return data, nil, false
	}
	return out, files, true
}

// PersonErased is what a person's erasure removed.
type PersonErased struct {
	Person     string `json:"person"`
	Identities int    `json:"identities"`
	Sessions   int    `json:"sessions"`
	Messages   int    `json:"messages"`
	Files      int    `json:"files"`
	Memory     int    `json:"memory_files"`
}
