package slackbridge

import (
	"context"
	"encoding/json"
	"errors"

	"brain/bot/bridge"
	"brain/engine"
	"brain/store"
	"brain/webhooks/slackhook"
)

// handleBatch works a claimed batch of inbox items in order, as handle
// does one by one, except that mentions starting a new thread (the
// common load: each starts a session) are gathered and their sessions
// created with their first messages in one transaction
// (engine.StartSessions), instead of two commits each that took turns
// with the intake's acks on SQLite's one writer. Any other item first
// starts the sessions gathered before it, so order holds; so does a
// second item of a gathered thread.
//
// A crash before the sessions' transaction commits leaves every item
// pending (nothing was written); after it, the items are worked again
// and find their threads bound and their messages recorded (the
// idempotency key), so nothing is created or sent twice.
func (b *Bridge) handleBatch(ctx context.Context, items []store.Inbound) []error {
	errs := make([]error, len(items))
	var pend []int
	var starts []engine.Start
	threads := map[string]bool{}
	// Once an item must wait (the run queue is full), so do the rest, as
	// with the one-at-a-time worker: a later reply in its thread must not
	// go first.
	wait := false
	flush := func() {
		if len(starts) == 0 {
			return
		}
		out := b.eng.StartSessions(ctx, starts)
		for j, i := range pend {
			errs[i] = out[j].Err
			if errors.Is(out[j].Err, engine.ErrOverloaded) {
				errs[i], wait = bridge.ErrRetryLater, true // waits in the inbox
			}
		}
		pend, starts = pend[:0], starts[:0]
		clear(threads)
	}
	for i, rec := range items {
		switch {
		case ctx.Err() != nil:
			errs[i] = ctx.Err()
			continue
		case wait:
			errs[i] = bridge.ErrRetryLater
			continue
		}
		if st, ok := b.newThreadStart(ctx, rec); ok && !threads[rec.ThreadKey] {
			pend, starts = append(pend, i), append(starts, st)
			threads[rec.ThreadKey] = true
			continue
		}
		if flush(); wait {
			errs[i] = bridge.ErrRetryLater
			continue
		}
		errs[i] = b.handle(ctx, rec)
		wait = errors.Is(errs[i], bridge.ErrRetryLater)
	}
	flush()
	return errs
}

// newThreadStart is the start of rec's session when rec is a mention that
// starts a new thread with no files: what onMessage would create and send
// with nothing to read from Slack (no thread to quote, no note: brain
// posted no message that a person's new message could be a reply to).
// ok is false for anything else, which handle works as before.
func (b *Bridge) newThreadStart(ctx context.Context, rec store.Inbound) (engine.Start, bool) {
	var it slackhook.Item
	if err := json.Unmarshal(rec.Payload, &it); err != nil {
		return engine.Start{}, false
	}
	m, ok := it.Body.(*slackhook.Message)
	if !ok || !m.Mention || m.ChannelType == "im" || len(m.Files) > 0 || (m.ThreadTS != "" && m.ThreadTS != m.TS) {
		return engine.Start{}, false
	}
	if _, exists, err := b.router.Session(ctx, it.ThreadKey); err != nil || exists {
		return engine.Start{}, false
	}
	return engine.Start{
		Session: engine.NewSession{Agent: b.cfg.Agent, Origin: engine.OriginSlack, ThreadKey: it.ThreadKey, Interactive: true, StartedBy: m.User},
		Input:   engine.Input{Text: m.Text, Author: m.User, IdempotencyKey: "slack:" + m.Channel + ":" + m.TS},
	}, true
}
