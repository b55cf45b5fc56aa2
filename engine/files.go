package engine

import (
	"context"
	"fmt"

	"brain/tools"
)

// FileRef is a file a person shared with a message, as the user.message
// event records it: the file itself lives in a content-addressed store
// outside the log (Config.Files), named by Hash. A file that could not be
// fetched or is not kept has no Hash and says why in Error.
type FileRef struct {
	// Hash is the hex SHA-256 of the content; empty when not stored.
	Hash string `json:"hash,omitempty"`
	Name string `json:"name"`
	Size int64  `json:"size"`
	// Type is the media type detected from the content (not the name).
	Type string `json:"type,omitempty"`
	// Source and SourceID name where it came from ("slack", the file's
	// id), and URL where it can be fetched again (with the platform's
	// token) when a replica does not hold it locally.
	Source   string `json:"source,omitempty"`
	SourceID string `json:"source_id,omitempty"`
	URL      string `json:"url,omitempty"`
	// Error says why the file is not available to the model.
	Error string `json:"error,omitempty"`
}

// Attachment is a file as a model receives it, beside a user message's
// text: Data with an image or PDF media type (adapters send image and
// document content), or Text (a text-like file, extracted text, or a
// note that the file cannot be read).
type Attachment struct {
	Name      string
	MediaType string
	Data      []byte
	Text      string
}

// Files loads what a FileRef names, for the model. Load fails only when
// the content cannot be had at all; a type the model cannot read is an
// Attachment with a Text note.
type Files interface {
	Load(ctx context.Context, ref FileRef) (Attachment, error)
}

// attachFiles turns the file refs buildMessages kept on user messages
// into attachments, newest first within maxAttachBytes (older files are
// named only). A file that cannot be loaded becomes a note: losing a
// file never fails the turn.
func (e *Engine) attachFiles(ctx context.Context, msgs []Message) {
	var used int64
	for i := len(msgs) - 1; i >= 0; i-- {
		refs := msgs[i].files
		atts := make([]Attachment, len(refs))
		for j := len(refs) - 1; j >= 0; j-- {
			ref := refs[j]
			if ref.Error == "" && ref.Hash != "" && e.maxAttachBytes > 0 && used+ref.Size > e.maxAttachBytes {
				ref.Error = "it was shared earlier and is not sent again: the files of one request are capped"
			}
			atts[j] = e.attachment(ctx, ref)
			if ref.Error == "" && ref.Hash != "" {
				used += ref.Size
			}
		}
		msgs[i].Attachments = append(msgs[i].Attachments, atts...)
		msgs[i].files = nil
	}
}

func (e *Engine) attachment(ctx context.Context, ref FileRef) Attachment {
	note := func(why string) Attachment {
		return Attachment{Name: ref.Name, Text: fmt.Sprintf("[file %q (%s, %d bytes) is not available: %s]", ref.Name, orUnknown(ref.Type), ref.Size, why)}
	}
	switch {
	case ref.Error != "":
		return note(ref.Error)
	case ref.Hash == "" || e.files == nil:
		return note("it was not kept")
	}
	a, err := e.files.Load(ctx, ref)
	if err != nil {
		e.log.Warn("file left out of the context", tools.LogErr, err)
		return note("it could not be loaded")
	}
	return a
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
