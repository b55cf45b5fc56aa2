package store

import (
	"context"
	"time"
)

// Code channel states: where a Slack session lives once it started coding.
const (
	// CodeChannelOpening: Slack made the channel; its link is not yet
	// posted in the thread the session started in.
	CodeChannelOpening = "opening"
	// CodeChannelOpen: the session lives in its code channel (Channel).
	CodeChannelOpen = "open"
	// CodeChannelUnavailable: the workspace refused code channels; the
	// session stays in its thread and brain does not ask again for it.
	CodeChannelUnavailable = "unavailable"
	// CodeChannelArchived: the session finished and its channel was
	// archived; messages there still reach the session (Slack lets people
	// reopen an archived channel).
	CodeChannelArchived = "archived"
)

// CodeChannel is the Slack code channel a session moved to when it
// started a coding task: from then on its replies go to the channel and
// every message there is the session's input.
type CodeChannel struct {
	SessionID string
	Team      string
	// Channel is the code channel's id, "" when the workspace refused one
	// (State CodeChannelUnavailable).
	Channel string
	// Origin is the thread key the session started in, where its link to
	// the channel was posted.
	Origin string
	State  string
	// Context is the context bar as last set, in the platform's own
	// format (Slack: the JSON of the items), so it is only sent again when
	// it changes and survives a restart.
	Context   string
	UpdatedAt time.Time
}

// CodeChannels map sessions to the code channels they moved to, both ways:
// delivery asks by session, intake by channel.
type CodeChannels interface {
	// CodeChannel returns the session's code channel; ok is false when it
	// has none (it never started coding, or code channels are off).
	CodeChannel(ctx context.Context, sessionID string) (c CodeChannel, ok bool, err error)
	// CodeChannelAt returns the code channel with this id in the team;
	// ok is false when the channel is not one.
	CodeChannelAt(ctx context.Context, team, channel string) (c CodeChannel, ok bool, err error)
	// SetCodeChannel records c for c.SessionID, replacing the earlier
	// record (a retry of the same creation writes the same row again).
	// A channel already recorded for another session is an error matching
	// engine.ErrConflict.
	SetCodeChannel(ctx context.Context, now time.Time, c CodeChannel) error
}
