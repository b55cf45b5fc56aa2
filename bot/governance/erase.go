package governance

import (
	"context"
	"fmt"
	"strings"
	"time"

	"brain/bot/audit"
	"brain/store"
)

// ErasedMarker replaces the text of an erased person's messages.
const ErasedMarker = "[message removed: its author was erased]"

// EraseStore is what Eraser reads and deletes with.
type EraseStore interface {
	store.People
	store.Retention
	MemoryScopes(ctx context.Context) ([]store.MemoryScope, error)
}

// FileDeleter deletes stored files by hash (bot/filestore).
type FileDeleter interface {
	Delete(hashes ...string) error
}

// Eraser erases a person (brain people erase): their messages become
// ErasedMarker in every session (the events stay, so shared sessions
// keep their shape), their files, memory, connections and identities go,
// and the erasure is in the audit trail before any of it happens.
type Eraser struct {
	Store EraseStore
	// Files is this replica's file store (nil: none kept). Other
	// replicas' copies expire with retention.files.
	Files FileDeleter
	Trail *audit.Recorder
	Now   func() time.Time
}

// Erase erases person id, acting for actor. Run again after a failure, it
// finishes the work: the person and their identities go last.
func (e *Eraser) Erase(ctx context.Context, actor, id string) (store.PersonErased, error) {
	p, err := e.Store.Person(ctx, id)
	if err != nil {
		return store.PersonErased{}, err
	}
	out := store.PersonErased{Person: p.ID, Identities: len(p.Identities)}
	surfaces := make([]string, len(p.Identities))
	authors := []string{}
	for i, idn := range p.Identities {
		surfaces[i] = idn.Surface
		authors = append(authors, idn.ExternalID)
	}
	// Recorded first: an erasure that cannot be recorded does not happen.
	// The entry names the person's id, never what they wrote.
	if err := e.Trail.Record(ctx, actor, audit.ActionErased, "person:"+p.ID,
		map[string]any{"identities": len(p.Identities), "surfaces": surfaces}); err != nil {
		return out, err
	}
	erased, err := e.Store.EraseAuthor(ctx, authors, ErasedMarker)
	if err != nil {
		return out, fmt.Errorf("erase %s's messages: %w", p.ID, err)
	}
	out.Sessions, out.Messages = erased.Sessions, erased.Messages
	if e.Files != nil && len(erased.Files) > 0 {
		if err := e.Files.Delete(erased.Files...); err != nil {
			return out, fmt.Errorf("erase %s's files: %w", p.ID, err)
		}
	}
	out.Files = len(erased.Files)
	scopes, err := e.Store.MemoryScopes(ctx)
	if err != nil {
		return out, fmt.Errorf("erase %s's memory: %w", p.ID, err)
	}
	var theirs []string
	for _, sc := range scopes {
		if personsScope(sc.Scope, p.ID, authors) {
			theirs = append(theirs, sc.Scope)
		}
	}
	if len(theirs) > 0 {
		if out.Memory, err = e.Store.EraseMemoryScopes(ctx, theirs); err != nil {
			return out, fmt.Errorf("erase %s's memory: %w", p.ID, err)
		}
	}
	if err := e.Store.ErasePerson(ctx, p.ID); err != nil {
		return out, err
	}
	return out, nil
}

// personsScope reports whether a memory scope is the person's own:
// "person:id:ID" (a linked person's), or a platform identity's,
// "person:SURFACE[:TEAM]:EXTERNAL" (bot's personScope).
func personsScope(scope, id string, externals []string) bool {
	if scope == "person:id:"+id {
		return true
	}
	if !strings.HasPrefix(scope, "person:") || strings.HasPrefix(scope, "person:id:") {
		return false
	}
	for _, ext := range externals {
		if strings.HasSuffix(scope, ":"+ext) {
			return true
		}
	}
	return false
}
