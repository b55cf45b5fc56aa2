package slackbridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"brain/bot/filestore"
	"brain/channels/slack"
	"brain/engine"
	"brain/tools"
	"brain/webhooks/slackhook"
)

// SourceSlack is the FileRef.Source of files shared in Slack.
const SourceSlack = "slack"

// downloadTimeout bounds one file's download, so a stalled one cannot
// hold up the inbox worker (the file becomes a line in the thread).
const downloadTimeout = time.Minute

// threadTimeout bounds reading a thread's earlier messages.
const threadTimeout = 30 * time.Second

// fetchFiles downloads the files shared with a message, within the caps
// of slack.files, keeps the readable ones in the file store and returns a
// ref for each (with Error when it is not available to the model) and the
// lines to post in the thread about those. Only a cancelled ctx is an
// error: a file that fails is a line, not a failed message.
func (b *Bridge) fetchFiles(ctx context.Context, files []slackhook.File) ([]engine.FileRef, []string, error) {
	limits := b.cfg.Files
	var refs []engine.FileRef
	var lines []string
	var total int64
	for _, f := range files {
		ref := engine.FileRef{Name: f.Name, Size: f.Size, Source: SourceSlack, SourceID: f.ID, URL: f.URL}
		switch {
		case b.files == nil:
			ref.Error = "files are not kept by this brain"
		case f.Size > limits.MaxFileBytes:
			ref.Error = fmt.Sprintf("it is too large (%s; the limit is %s)", filestore.Size(f.Size), filestore.Size(limits.MaxFileBytes))
		case total+f.Size > limits.MaxTurnBytes:
			ref.Error = fmt.Sprintf("the files of one message may total %s", filestore.Size(limits.MaxTurnBytes))
		default:
			dctx, cancel := context.WithTimeout(ctx, downloadTimeout)
			data, err := b.reader.Download(dctx, f.URL, limits.MaxFileBytes)
			cancel()
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			total += int64(len(data))
			b.keep(&ref, data, err)
		}
		if ref.Error != "" {
			about := ""
			if ref.Type != "" {
				about = fmt.Sprintf(" (%s, %s)", ref.Type, filestore.Size(ref.Size))
			}
			// The name is the sharer's and the error may quote it: both
			// are literal, so neither can mention, broadcast or link.
			lines = append(lines, fmt.Sprintf(":warning: I could not read %s%s: %s. The agent is told it was shared.",
				slack.Literal(f.Name), about, fileError(ref.Error)))
		}
		refs = append(refs, ref)
	}
	return refs, lines, nil
}

// fileError is ref.Error for the thread: brain's own words as they are,
// a download failure's error text quoted literally.
func fileError(e string) string {
	if rest, ok := strings.CutPrefix(e, downloadFailed); ok {
		return strings.TrimSuffix(downloadFailed, " (") + " " + slack.Literal(strings.TrimSuffix(rest, ")"))
	}
	return e
}

// downloadFailed begins ref.Error for a download that failed.
const downloadFailed = "the download failed ("

// keep records a downloaded file in ref: its detected type, and its hash
// once stored, or why it is not available.
func (b *Bridge) keep(ref *engine.FileRef, data []byte, err error) {
	switch {
	case errors.Is(err, slack.ErrTooLarge):
		ref.Error = fmt.Sprintf("it is larger than the limit of %s", filestore.Size(b.cfg.Files.MaxFileBytes))
		return
	case err != nil:
		b.log.Warn("slack file download failed", tools.LogFile, ref.SourceID, tools.LogErr, err)
		ref.Error = downloadFailed + clip(err.Error(), 160) + ")"
		return
	}
	mediaType, kind := filestore.Classify(data)
	ref.Type, ref.Size = mediaType, int64(len(data))
	if kind == filestore.KindOther {
		ref.Error = "brain cannot read files of this type"
		return
	}
	hash, err := b.files.Put(data)
	if err != nil {
		b.log.Error("slack file not stored", tools.LogFile, ref.SourceID, tools.LogErr, err)
		ref.Error = "it could not be stored"
		return
	}
	ref.Hash = hash
}

// postFileLines tells the thread which files the agent cannot read.
func (b *Bridge) postFileLines(ctx context.Context, m slackhook.Message, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	_, err := b.poster.Reply(ctx, m.Channel, m.ThreadTS, strings.Join(lines, "\n"))
	return err
}
