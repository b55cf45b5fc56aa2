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
	"encoding/json"
	"errors"
	"fmt"

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
	// DedupeKeys holds every key under which this Item may arrive again. An
	// Inbox must treat the Item as a duplicate when any of them was seen:
	//   - "event:<event_id>" for Events API deliveries (retries reuse it);
	//   - "msg:<channel>:<ts>" for messages, because one mention arrives as
	//     both app_mention and message with different event ids;
	//   - "action:<message_ts>:<action_ts>:<user>:<action_id>" for clicks;
	//   - "view:<view_id>:<user>" for submitted modals.
	DedupeKeys []string

	// ThreadKey names the conversation: "slack:<team>:<channel>:<root ts>",
	// where the root is thread_ts if set, else the message's own ts. DMs
	// work the same way.
	ThreadKey string

	// Body is what happened: one of *Message, *Action, *Home, *Submission,
	// *Stop or *ThreadStarted.
	Body Body
}

// Body is what an Item carries. The set is sealed (only this package's
// types have kind), so a consumer's type switch over the six cases is
// complete.
type Body interface{ kind() string }

func (*Message) kind() string       { return KindMessage }
func (*Action) kind() string        { return KindAction }
func (*Home) kind() string          { return KindHome }
func (*Submission) kind() string    { return KindSubmission }
func (*Stop) kind() string          { return KindStop }
func (*ThreadStarted) kind() string { return KindThreadStarted }

// Kind is the kind of the Item's Body ("" without one).
func (it Item) Kind() string {
	if it.Body == nil {
		return ""
	}
	return it.Body.kind()
}

// Message is the Body when it is a *Message, else nil.
func (it Item) Message() *Message { m, _ := it.Body.(*Message); return m }

// Action is the Body when it is an *Action, else nil.
func (it Item) Action() *Action { a, _ := it.Body.(*Action); return a }

// Home is the Body when it is a *Home, else nil.
func (it Item) Home() *Home { h, _ := it.Body.(*Home); return h }

// Submission is the Body when it is a *Submission, else nil.
func (it Item) Submission() *Submission { s, _ := it.Body.(*Submission); return s }

// Agent is the agent event of a *Stop or *ThreadStarted Body, else nil.
func (it Item) Agent() *Agent {
	switch b := it.Body.(type) {
	case *Stop:
		return &b.Agent
	case *ThreadStarted:
		return &b.Agent
	}
	return nil
}

// itemJSON is how an Item is stored in the inbox: the kind beside one
// body field. Items recorded by earlier versions have this shape, so it
// must not change.
type itemJSON struct {
	Kind       string      `json:"kind"`
	DedupeKeys []string    `json:"dedupe_keys"`
	ThreadKey  string      `json:"thread_key"`
	Message    *Message    `json:"message,omitempty"`
	Action     *Action     `json:"action,omitempty"`
	Home       *Home       `json:"home,omitempty"`
	Submission *Submission `json:"submission,omitempty"`
	Agent      *Agent      `json:"agent,omitempty"` // KindStop, KindThreadStarted
}

// MarshalJSON writes the stored shape.
func (it Item) MarshalJSON() ([]byte, error) {
	w := itemJSON{Kind: it.Kind(), DedupeKeys: it.DedupeKeys, ThreadKey: it.ThreadKey,
		Message: it.Message(), Action: it.Action(), Home: it.Home(), Submission: it.Submission(), Agent: it.Agent()}
	if w.Kind == "" {
		return nil, errors.New("slack item without a body")
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the stored shape, refusing one whose kind and body
// disagree.
func (it *Item) UnmarshalJSON(b []byte) error {
	var w itemJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var body Body
	switch {
	case w.Kind == KindMessage && w.Message != nil:
		body = w.Message
	case w.Kind == KindAction && w.Action != nil:
		body = w.Action
	case w.Kind == KindHome && w.Home != nil:
		body = w.Home
	case w.Kind == KindSubmission && w.Submission != nil:
		body = w.Submission
	case w.Kind == KindStop && w.Agent != nil:
		body = &Stop{Agent: *w.Agent}
	case w.Kind == KindThreadStarted && w.Agent != nil:
		body = &ThreadStarted{Agent: *w.Agent}
	default:
		return fmt.Errorf("slack item of kind %q without its body", w.Kind)
	}
	*it = Item{DedupeKeys: w.DedupeKeys, ThreadKey: w.ThreadKey, Body: body}
	return nil
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
