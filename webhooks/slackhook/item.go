// Package slackhook receives Slack's inbound traffic, from the Events API and
// interactivity endpoints over HTTP or from Socket Mode, verifies it, turns it
// into platform-neutral Items and hands each one to an Inbox before Slack is
// acknowledged. What happens next (routing a thread to a session, answering a
// question) is the caller's business.
//
// It must not import brain/store, brain/channels or brain/bot: what it needs
// from them (a durable inbox with dedupe) is the Inbox interface below, which
// bot/slackbridge satisfies.
package slackhook

import (
	"context"

	"brain/internal/threadkey"
)

// Item kinds.
const (
	KindMessage = "message"
	KindAction  = "action"
	KindHome    = "home" // a person opened the App Home tab
)

// Item is one inbound thing worth acting on, already filtered: bots, the
// bot's own messages, edits and deletions never become Items.
type Item struct {
	Kind string `json:"kind"` // KindMessage or KindAction

	// DedupeKeys holds every key under which this Item may arrive again. An
	// Inbox must treat the Item as a duplicate when any of them was seen:
	//   - "event:<event_id>" for Events API deliveries (retries reuse it);
	//   - "msg:<channel>:<ts>" for messages, because one mention arrives as
	//     both app_mention and message with different event ids;
	//   - "action:<message_ts>:<action_ts>:<user>:<action_id>" for clicks;
	//   - "view:<view_id>:<user>" for submitted modals.
	DedupeKeys []string `json:"dedupe_keys"`

	// ThreadKey names the conversation: "slack:<team>:<channel>:<root ts>",
	// where the root is thread_ts if set, else the message's own ts. DMs
	// work the same way.
	ThreadKey string `json:"thread_key"`

	Message    *Message    `json:"message,omitempty"`
	Action     *Action     `json:"action,omitempty"`
	Home       *Home       `json:"home,omitempty"`
	Submission *Submission `json:"submission,omitempty"`
	Agent      *Agent      `json:"agent,omitempty"` // KindStop, KindThreadStarted
}

// Home is an app_home_opened event on the Home tab.
type Home struct {
	User string `json:"user"`
	Team string `json:"team"`
}

// File is a file shared with a message, as the event describes it; the
// content is fetched later from URL with the bot token.
type File struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Mimetype string `json:"mimetype,omitempty"` // Slack's guess from the name; not trusted
	Size     int64  `json:"size"`
	URL      string `json:"url"` // url_private_download
}

// Message is a person's message in a channel, group, DM or group DM.
type Message struct {
	EventID     string `json:"event_id,omitempty"`
	EventType   string `json:"event_type"` // "app_mention" or "message"
	Team        string `json:"team"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type,omitempty"` // channel, group, im, mpim; empty for app_mention
	User        string `json:"user"`
	// Text is Slack's mrkdwn as sent (&lt; &gt; &amp; still escaped, user
	// mentions as <@U...>), without the leading mention of the bot.
	Text string `json:"text"`
	TS   string `json:"ts"`
	// ThreadTS is the thread root to reply under: the message's thread_ts,
	// or its own TS when it starts a thread (ThreadTS == TS).
	ThreadTS string `json:"thread_ts"`
	// Mention is true for app_mention events and for messages whose text
	// mentions the bot.
	Mention bool `json:"mention"`
	// Files are the files shared with the message (file_share).
	Files []File `json:"files,omitempty"`
}

// Action is one click (button or select) from a block_actions interaction.
type Action struct {
	ActionID  string `json:"action_id"`
	BlockID   string `json:"block_id,omitempty"`
	Value     string `json:"value"` // button value, or the selected option's value
	ActionTS  string `json:"action_ts,omitempty"`
	User      string `json:"user"`
	Team      string `json:"team"`
	Channel   string `json:"channel"`
	MessageTS string `json:"message_ts"` // the message holding the buttons
	// ThreadTS is the root of the thread the message sits in, or MessageTS
	// when the message is not in a thread.
	ThreadTS    string `json:"thread_ts"`
	ResponseURL string `json:"response_url,omitempty"` // valid about 30 minutes
	TriggerID   string `json:"trigger_id,omitempty"`   // valid about 3 seconds
	// Home is true for a click on the App Home tab: no channel, no thread.
	Home bool `json:"home,omitempty"`
}

// Inbox durably records Items before Slack is acknowledged. Record reports
// duplicate=true, without error, when any of the Item's DedupeKeys was
// recorded before. An error means nothing was recorded and Slack should
// deliver again (HTTP 500, or no Socket Mode ack).
type Inbox interface {
	Record(ctx context.Context, it Item) (duplicate bool, err error)
}

// threadKey builds an Item.ThreadKey.
func threadKey(team, channel, root string) string {
	return threadkey.Slack{Team: team, Channel: channel, TS: root}.Key()
}

// validID reports whether s looks like a Slack id or timestamp: short,
// non-empty, letters, digits, '.', '_' or '-'. Keys are built from these, so
// a ':' or space must never get in.
func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// allValid reports whether every id is valid.
func allValid(ids ...string) bool {
	for _, id := range ids {
		if !validID(id) {
			return false
		}
	}
	return true
}

// firstNonEmpty returns the first non-empty string.
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
