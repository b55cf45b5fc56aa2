package store

import (
	"context"
	"time"

	"brain/engine"
)

// DeliveryCursors remember how far each session's events have been
// rendered to its platform, so a restart resumes delivery where it stopped
// instead of re-sending the thread.
type DeliveryCursors interface {
	// DeliveryCursor returns the seq of the last event of the session
	// delivered to origin's platform, 0 when none was.
	DeliveryCursor(ctx context.Context, origin engine.Origin, sessionID string) (int64, error)
	// SetDeliveryCursor records seq as the last delivered event.
	SetDeliveryCursor(ctx context.Context, now time.Time, origin engine.Origin, sessionID string, seq int64) error
}

// PostedQuestion is the message that shows a session's open question, kept
// to replace its buttons once the question is answered or closed.
type PostedQuestion struct {
	// MessageRef is the platform's reference to the message (Slack: its ts).
	MessageRef string
	Question   engine.Question
}

// PostedMessages remember messages brain posted and updates later: the card
// of an approval (updated in place once decided) and the open question of a
// session. Both are keyed by platform (an engine origin, e.g.
// engine.OriginSlack) so platforms never see each other's references.
type PostedMessages interface {
	// ApprovalMessage returns the reference of the message showing the
	// approval's card on platform; ok is false when none was posted.
	ApprovalMessage(ctx context.Context, platform engine.Origin, approvalID string) (ref string, ok bool, err error)
	// SetApprovalMessage records ref as the approval's card on platform.
	// A platform that posts several copies of a card (a thread, an
	// approvers' channel, DMs) keeps them all in ref, its own format.
	SetApprovalMessage(ctx context.Context, now time.Time, platform engine.Origin, approvalID, ref string) error
	// PostedQuestion returns the session's open question as posted on
	// platform; ok is false when none is open.
	PostedQuestion(ctx context.Context, platform engine.Origin, sessionID string) (q PostedQuestion, ok bool, err error)
	// SetPostedQuestion records q as the session's open question on
	// platform, replacing any earlier one.
	SetPostedQuestion(ctx context.Context, now time.Time, platform engine.Origin, sessionID string, q PostedQuestion) error
	// ClearPostedQuestion forgets the session's open question on platform
	// (once answered or closed); clearing none is not an error.
	ClearPostedQuestion(ctx context.Context, platform engine.Origin, sessionID string) error
}

// ThreadContexts keep the note brain leaves on a thread it started (a
// schedule's outcome): a reply there starts a session that sees the note.
type ThreadContexts interface {
	// ThreadContext returns the note left for the thread; ok is false when
	// brain left none, i.e. the thread is not one brain started.
	ThreadContext(ctx context.Context, threadKey string) (note string, ok bool, err error)
	// SetThreadContext leaves note for the thread, replacing any earlier
	// one.
	SetThreadContext(ctx context.Context, now time.Time, threadKey, note string) error
}

// WorkspaceModes remember what a platform's workspace was found to
// support at run time (Slack: a workspace that refuses streamed replies
// falls back to updating one message), so a restart does not ask again.
// Modes are the platform's own words.
type WorkspaceModes interface {
	// WorkspaceMode returns the mode recorded for the workspace; ok is
	// false when none was.
	WorkspaceMode(ctx context.Context, platform engine.Origin, workspace string) (mode string, ok bool, err error)
	// SetWorkspaceMode records mode, replacing any earlier one.
	SetWorkspaceMode(ctx context.Context, now time.Time, platform engine.Origin, workspace, mode string) error
}

// ChannelState is the delivery state a platform bridge keeps.
type ChannelState interface {
	DeliveryCursors
	PostedMessages
	ThreadContexts
	WorkspaceModes
}
