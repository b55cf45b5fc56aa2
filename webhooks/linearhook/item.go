// Package linearhook receives Linear's Agent API webhooks (AgentSessionEvent
// `created` and `prompted`), verifies them, turns them into platform-neutral
// Items and hands each one to an Inbox before Linear is answered. What
// happens next (mapping the agent session to a brain session, cancelling a
// turn on a stop signal) is the caller's business.
//
// It must not import brain/store, brain/channels or brain/bot: what it needs
// from them (a durable inbox with dedupe) is the Inbox interface below,
// which bot/linearbridge satisfies.
package linearhook

import (
	"context"
	"strings"

	"brain/internal/threadkey"
)

// Item kinds: the AgentSessionEvent actions we act on.
const (
	// KindCreated: a person mentioned the app or delegated an issue to it;
	// Linear created an agent session and expects an activity within 10 s.
	KindCreated = "created"
	// KindPrompted: a person wrote into an existing agent session (a reply,
	// a choice from a select elicitation, or a stop request). It may arrive
	// before the session's created event.
	KindPrompted = "prompted"
)

// Item is one AgentSessionEvent worth acting on.
type Item struct {
	Kind string `json:"kind"` // KindCreated or KindPrompted

	// DeliveryID is the Inbox's dedupe key: the Linear-Delivery header,
	// unique per delivery and repeated on Linear's retries; EventKey when
	// the header is missing or malformed.
	DeliveryID string `json:"delivery_id"`
	// EventKey names the event from the signed body: "created:<session id>"
	// or "prompted:<activity id>". The Linear-Delivery header is not signed,
	// so a captured delivery replayed within MaxSkew under a new header
	// passes the Inbox; use EventKey as the idempotency key of the message
	// it starts (user.message) and such a replay changes nothing.
	EventKey string `json:"event_key"`

	// OrganizationID is the Linear workspace the event comes from: its
	// token answers it. "" when the payload did not say.
	OrganizationID string `json:"organization_id,omitempty"`

	// SessionID is Linear's agent session id; every activity brain emits
	// goes to it.
	SessionID string `json:"session_id"`
	// ThreadKey names the conversation: "linear:" + SessionID. A reply
	// after the session ended arrives as prompted on the same session, so
	// it continues the same thread.
	ThreadKey string `json:"thread_key"`
	// ActivityID is the id of the person's prompt activity (prompted only):
	// a natural idempotency key for the message it carries.
	ActivityID string `json:"activity_id,omitempty"`

	// Text is what the person wrote: for created, the body of the comment
	// that mentioned the app ("" when the issue was delegated by
	// assignment); for prompted, the prompt activity's body, which is the
	// option's value when the person picked from a select elicitation.
	Text string `json:"text"`
	// Context is Linear's promptContext (created only): a formatted prompt
	// with the issue, its comments and the workspace/team guidance. It is
	// the better first input of a session; see Prompt.
	Context string `json:"context,omitempty"`
	// Guidance is the workspace's and team's instructions for agents
	// (created only), to reach the model as instructions from the
	// workspace.
	Guidance string `json:"guidance,omitempty"`
	// PreviousComments are the thread's comments before the mention
	// (created only, when the mention was a reply in a thread).
	PreviousComments []Comment `json:"previous_comments,omitempty"`

	// UserID and UserName name the person: the session's creator for
	// created, the prompt's author for prompted (the name only when that
	// author is the session's creator). Empty for automation.
	UserID   string `json:"user_id,omitempty"`
	UserName string `json:"user_name,omitempty"`

	IssueID         string `json:"issue_id,omitempty"`
	IssueIdentifier string `json:"issue_identifier,omitempty"` // e.g. "ENG-123"
	IssueTitle      string `json:"issue_title,omitempty"`
	IssueURL        string `json:"issue_url,omitempty"`
	// TeamID is the issue's team: the channel the agents' memory shares.
	TeamID string `json:"team_id,omitempty"`

	// Stop is true when the person asked the agent to stop (a prompt with
	// the stop signal): cancel the turn, close any open question, and
	// finish with a response or error activity. Text may be empty.
	Stop bool `json:"stop,omitempty"`
}

// Comment is one earlier comment of the thread an agent session started in.
type Comment struct {
	ID     string `json:"id"`
	Body   string `json:"body"`
	UserID string `json:"user_id,omitempty"`
}

// Prompt is the text to give the agent: Context when Linear sent one (it
// already contains the mentioning comment), else Text, else for a created
// event that came with neither (a bare delegation) the issue's identifier
// and title.
func (it Item) Prompt() string {
	switch {
	case it.Context != "":
		return it.Context
	case it.Text != "":
		return it.Text
	case it.Kind == KindCreated:
		return strings.TrimSpace(it.IssueIdentifier + " " + it.IssueTitle)
	}
	return ""
}

// Inbox durably records Items before Linear is answered. Record reports
// duplicate=true, without error, when the Item's DeliveryID was recorded
// before. An error means nothing was recorded and Linear should deliver
// again (HTTP 500). Linear waits 5 s, so Record must be quick.
type Inbox interface {
	Record(ctx context.Context, it Item) (duplicate bool, err error)
}

// ThreadKey is the Item.ThreadKey of an agent session.
func ThreadKey(sessionID string) string { return threadkey.Linear{Session: sessionID}.Key() }

// validID reports whether s looks like a Linear id (a UUID) or another
// short token: non-empty, at most 128 bytes of letters, digits, '-', '_' or
// '.'. Keys are built from these, so a ':' or space must never get in.
func validID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}
