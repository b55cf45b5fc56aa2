package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Reader reads from Slack what sessions need beside posting: the earlier
// messages of a thread, people's display names (cached), shared files
// (downloaded with the bot token) and user group members. Safe for
// concurrent use.
type Reader struct {
	api *slack.Client
	now func() time.Time

	mu    sync.Mutex
	names map[string]cachedName
}

type cachedName struct {
	name string
	at   time.Time
}

// Cache bounds of display names.
const (
	nameTTL   = time.Hour
	maxNames  = 2048
	pageLimit = 200 // conversations.replies page size
	maxPages  = 10  // a thread longer than this is read from its newest pages
)

// NewReader reads through client; now stamps cache entries.
func NewReader(client *slack.Client, now func() time.Time) *Reader {
	if now == nil {
		now = time.Now
	}
	return &Reader{api: client, now: now, names: map[string]cachedName{}}
}

// ThreadMessage is one earlier message of a thread.
type ThreadMessage struct {
	TS    string
	User  string // "" for a bot without a user
	BotID string // set for messages from apps and bots
	// Username is the name a bot posted under, when it gave one.
	Username string
	Text     string
	// Files names the files shared with the message.
	Files []string
}

// ThreadBefore returns the messages of the thread rooted at rootTS posted
// before beforeTS, oldest first (the root included). Very long threads are
// read up to maxPages pages.
func (r *Reader) ThreadBefore(ctx context.Context, channel, rootTS, beforeTS string) ([]ThreadMessage, error) {
	var out []ThreadMessage
	cursor := ""
	for page := 0; page < maxPages; page++ {
		msgs, more, next, err := r.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
			ChannelID: channel, Timestamp: rootTS, Cursor: cursor, Latest: beforeTS, Limit: pageLimit,
		})
		if err != nil {
			return nil, fmt.Errorf("read thread %s: %w", rootTS, err)
		}
		for _, m := range msgs {
			if m.Timestamp == beforeTS || m.SubType == "message_deleted" {
				continue
			}
			tm := ThreadMessage{TS: m.Timestamp, User: m.User, BotID: m.BotID, Username: m.Username, Text: m.Text}
			if tm.Username == "" && m.BotProfile != nil {
				tm.Username = m.BotProfile.Name
			}
			for _, f := range m.Files {
				tm.Files = append(tm.Files, f.Name)
			}
			out = append(out, tm)
		}
		if !more || next == "" {
			break
		}
		cursor = next
	}
	return out, nil
}

// UserName returns the person's display name (else real name, else user
// name), cached for an hour; the id itself when Slack does not say.
func (r *Reader) UserName(ctx context.Context, userID string) string {
	now := r.now()
	r.mu.Lock()
	c, ok := r.names[userID]
	r.mu.Unlock()
	if ok && now.Sub(c.at) < nameTTL {
		return c.name
	}
	u, err := r.api.GetUserInfoContext(ctx, userID)
	if err != nil {
		if ok {
			return c.name // stale beats nothing
		}
		return userID
	}
	name := firstOf(u.Profile.DisplayName, u.Profile.RealName, u.RealName, u.Name, userID)
	r.mu.Lock()
	if len(r.names) >= maxNames {
		clear(r.names) // a crude bound: names are cheap to ask again
	}
	r.names[userID] = cachedName{name: name, at: now}
	r.mu.Unlock()
	return name
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// ErrTooLarge is Download's error for a file over its cap.
var ErrTooLarge = errors.New("file is larger than the limit")

// Download fetches a file's url_private_download with the bot token,
// reading at most max bytes (ErrTooLarge beyond). slack-go sends the token
// only to Slack's own hosts or the configured API URL.
func (r *Reader) Download(ctx context.Context, url string, max int64) ([]byte, error) {
	w := &cappedBuffer{max: max}
	if err := r.api.GetFileContext(ctx, url, w); err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, ErrTooLarge
		}
		return nil, fmt.Errorf("download file: %w", err)
	}
	return w.buf, nil
}

// cappedBuffer collects up to max bytes and fails the write beyond.
type cappedBuffer struct {
	buf []byte
	max int64
}

var _ io.Writer = (*cappedBuffer)(nil)

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if int64(len(c.buf)+len(p)) > c.max {
		return 0, ErrTooLarge
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}
