package engine

import (
	"context"
	"strings"
)

// EventFeedbackGiven is feedback.given: a person rated one of the agent's
// replies.
const EventFeedbackGiven = "feedback.given"

// Feedback ratings.
const (
	FeedbackPositive = "positive"
	FeedbackNegative = "negative"
)

// FeedbackGiven is feedback.given. MessageID is the id of the
// agent.message event rated.
type FeedbackGiven struct {
	By        string `json:"by"`
	MessageID string `json:"message_id"`
	Rating    string `json:"rating"`
	// Source is where it was given ("slack").
	Source string `json:"source,omitempty"`
}

func (FeedbackGiven) EventType() string { return EventFeedbackGiven }
func (FeedbackGiven) isPayload()        {}

// RecordFeedback appends a feedback.given event to the session. It starts
// no turn and leaves the model's context alone.
func (e *Engine) RecordFeedback(ctx context.Context, sessionID string, f FeedbackGiven) (Event, error) {
	if strings.TrimSpace(f.By) == "" || f.MessageID == "" {
		return Event{}, Errorf(CodeInvalid, "feedback needs who gave it and the message it rates")
	}
	if f.Rating != FeedbackPositive && f.Rating != FeedbackNegative {
		return Event{}, Errorf(CodeInvalid, "feedback rating must be %q or %q", FeedbackPositive, FeedbackNegative)
	}
	if _, err := e.store.Session(ctx, sessionID); err != nil {
		return Event{}, err
	}
	evs, err := e.events("", f)
	if err != nil {
		return Event{}, err
	}
	res, err := e.commit(ctx, Commit{SessionID: sessionID, Events: evs})
	if err != nil {
		return Event{}, err
	}
	e.count("feedback_" + f.Rating)
	return res.Events[0], nil
}
