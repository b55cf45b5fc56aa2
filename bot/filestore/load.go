package filestore

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"brain/engine"
)

// Fetch gets a file's content again from its source (the URL in its ref),
// reading at most max bytes.
type Fetch func(ctx context.Context, ref engine.FileRef, max int64) ([]byte, error)

// Loader is the engine's Files: it reads the store and, for a file the
// store no longer (or never) held, fetches it from its source by the
// function registered for ref.Source, checks its hash and keeps it.
type Loader struct {
	Store *Store
	Fetch map[string]Fetch
	// MaxFileBytes caps a re-fetch; MaxTextChars the text of one file.
	MaxFileBytes int64
	MaxTextChars int
	// MaxTurnBytes is the cap on one request's file content the wiring
	// gives the engine (engine.Config.FileBudget).
	MaxTurnBytes int64
}

var _ engine.Files = (*Loader)(nil)

// Load returns ref's content for the model.
func (l *Loader) Load(ctx context.Context, ref engine.FileRef) (engine.Attachment, error) {
	data, err := l.Store.Get(ref.Hash)
	if errors.Is(err, ErrNotFound) {
		data, err = l.refetch(ctx, ref)
	}
	if err != nil {
		return engine.Attachment{}, err
	}
	return Attach(ref.Name, data, l.MaxTextChars), nil
}

func (l *Loader) refetch(ctx context.Context, ref engine.FileRef) ([]byte, error) {
	fetch, ok := l.Fetch[ref.Source]
	if !ok || ref.URL == "" {
		return nil, fmt.Errorf("file %s is not stored here and cannot be fetched again", ref.Hash)
	}
	data, err := fetch(ctx, ref, l.MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("fetch file %s again: %w", ref.SourceID, err)
	}
	if Hash(data) != ref.Hash {
		return nil, fmt.Errorf("file %s changed at its source since it was shared", ref.SourceID)
	}
	if _, err := l.Store.Put(data); err != nil {
		return nil, err
	}
	return data, nil
}

// Attach turns a file's content into what the model receives: images and
// PDFs as data, text as a fenced block cut to maxChars, other types as a
// note naming the file with its type and size.
func Attach(name string, data []byte, maxChars int) engine.Attachment {
	mediaType, kind := Classify(data)
	switch kind {
	case KindImage, KindPDF:
		return engine.Attachment{Name: name, MediaType: mediaType, Data: data}
	case KindText:
		text, cut := clipRunes(string(data), maxChars)
		note := ""
		if cut {
			note = fmt.Sprintf(" (first %d characters)", maxChars)
		}
		return engine.Attachment{Name: name, MediaType: mediaType,
			Text: fmt.Sprintf("File %q shared in the thread%s:\n````\n%s\n````", name, note, text)}
	}
	return engine.Attachment{Name: name, MediaType: mediaType, Text: Unreadable(name, mediaType, int64(len(data)))}
}

// Unreadable is the note for a file of a type brain cannot pass on.
func Unreadable(name, mediaType string, size int64) string {
	return fmt.Sprintf("[file %q (%s, %s) was shared; brain cannot read files of this type]", name, mediaType, Size(size))
}

// Size formats a byte count for people.
func Size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func clipRunes(s string, n int) (string, bool) {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j], true
		}
		i++
	}
	return s, false
}
