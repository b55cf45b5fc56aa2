package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"brain/bot/config"
	"brain/engine"
	"brain/store"
	"brain/tools"
)

const (
	// watchPoll re-reads a watched session even without a commit in this
	// process (another process may run it).
	watchPoll = 5 * time.Second
	// postTimeout bounds one OutcomePoster call.
	postTimeout = 30 * time.Second
)

// watchAsync watches the run's session until its turn is over, then records
// the outcome. inputSeq is the seq of the run's user.message. Called with
// s.mu held, so Stop cannot be waiting yet.
func (s *Scheduler) watchAsync(cfg config.ScheduleConfig, run store.ScheduleRun, inputSeq int64) {
	if s.stopped || !s.watching.add(run) {
		return
	}
	s.life.Go(func(ctx context.Context) {
		defer s.watching.done(run)
		s.watch(ctx, cfg, run, inputSeq)
	})
}

func (s *Scheduler) watch(ctx context.Context, cfg config.ScheduleConfig, run store.ScheduleRun, inputSeq int64) {
	// The change channel is taken only after a read that finds the turn
	// still going (then the session is read again, so no commit is missed):
	// a finished session leaves no waiter behind in the engine.
	var changed <-chan struct{}
	for {
		done, err := s.check(ctx, cfg, run, inputSeq)
		if done {
			return
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Error("watch schedule run", tools.LogSchedule, run.Schedule, tools.LogSession, run.SessionID, tools.LogErr, err)
		}
		if changed == nil {
			changed = s.engine.Changed(run.SessionID)
			continue
		}
		select {
		case <-changed:
		case <-time.After(watchPoll):
		case <-ctx.Done():
			return
		}
		changed = nil
	}
}

// check records the run's end when its turn is over; done tells whether it
// was.
func (s *Scheduler) check(ctx context.Context, cfg config.ScheduleConfig, run store.ScheduleRun, inputSeq int64) (done bool, err error) {
	sess, err := s.engine.Session(ctx, run.SessionID)
	if err != nil || !turnOver(sess, inputSeq) {
		return false, err
	}
	status, outcome, err := s.summary(ctx, sess, inputSeq)
	if err != nil {
		return false, err
	}
	s.finish(ctx, cfg, run, status, outcome)
	return true, nil
}

// turnOver reports whether the turn that took the run's input has ended:
// the input was taken (or dropped by a cancel) and no turn runs.
func turnOver(s engine.Session, inputSeq int64) bool {
	return s.Status != engine.StatusRunning && s.InputCursor >= inputSeq
}

// summary reads what the run's turn left behind.
func (s *Scheduler) summary(ctx context.Context, sess engine.Session, inputSeq int64) (status, outcome string, err error) {
	evs, err := s.engine.Events(ctx, sess.ID, inputSeq-1, 0)
	if err != nil {
		return "", "", fmt.Errorf("read run events: %w", err)
	}
	var payloads []engine.Payload
	for _, ev := range evs {
		p, err := ev.Decode()
		if err != nil {
			// The run still ends; its outcome is read from the rest.
			s.log.Warn("schedule run: unreadable event left out of the outcome", tools.LogSession, sess.ID, tools.LogErr, err)
			continue
		}
		payloads = append(payloads, p)
	}
	status, outcome = summarize(sess, payloads)
	return status, outcome, nil
}

// summarize decides a finished run's status and outcome from its session
// and the payloads of the events from its input on: the final agent
// message, else the committed result, for a completed run; the error for
// one that failed, was interrupted or was cancelled.
func summarize(sess engine.Session, payloads []engine.Payload) (status, outcome string) {
	var text, errMsg, turnOutcome string
	for _, p := range payloads {
		switch d := p.(type) {
		case engine.AgentMessage:
			if d.Text != "" {
				text = d.Text
			}
		case engine.SessionError:
			errMsg = d.Message
		case engine.TurnCompleted:
			turnOutcome = string(d.Outcome)
		}
	}
	switch {
	case sess.Status == engine.StatusFailed:
		status = store.RunFailed
	case sess.Status == engine.StatusInterrupted:
		status = store.RunInterrupted
	case turnOutcome == "" || turnOutcome == string(engine.OutcomeCancelled):
		status = store.RunInterrupted
		if errMsg == "" {
			errMsg = "the run was cancelled before it finished"
		}
	default:
		status = store.RunCompleted
	}
	if status != store.RunCompleted {
		if errMsg == "" {
			errMsg = "the run stopped with status " + string(sess.Status)
		}
		return status, errMsg
	}
	if text != "" {
		return status, text
	}
	res, err := sess.LatestResult()
	if err != nil {
		return status, "(the agent's result cannot be read: " + err.Error() + ")"
	}
	if res != nil && len(res.Data) > 0 {
		return status, string(res.Data)
	}
	return status, "(the agent finished without a message)"
}

// finish records the run's end and posts its outcome. Of two watchers of
// one run only the first records and posts. Posting is at most once: a
// crash between the record and the post loses the post, never repeats it.
func (s *Scheduler) finish(ctx context.Context, cfg config.ScheduleConfig, run store.ScheduleRun, status, outcome string) store.ScheduleRun {
	run.Status, run.Outcome, run.UpdatedAt = status, outcome, s.clock()
	first, err := s.store.FinishRun(ctx, run)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("record schedule run", tools.LogSchedule, run.Schedule, tools.LogErr, err)
		}
		return run
	}
	if !first {
		return run
	}
	s.log.Info("schedule run finished", tools.LogSchedule, run.Schedule, tools.LogFireTime, run.FireTime.Format(time.RFC3339),
		tools.LogSession, run.SessionID, tools.LogRunState, status)
	if (cfg.PostTo == config.PostToConfig{}) {
		return run
	}
	poster := s.outcomePoster()
	if poster == nil {
		s.log.Warn("schedule outcome not posted: nothing in this build posts to post_to", tools.LogSchedule, run.Schedule)
		return run
	}
	pctx, cancel := context.WithTimeout(ctx, postTimeout)
	defer cancel()
	var loc *time.Location
	if e := s.byName[run.Schedule]; e != nil {
		loc = e.loc
	}
	if err := poster.PostScheduleOutcome(pctx, cfg, viewRun(run, loc), outcome); err != nil {
		s.log.Error("post schedule outcome", tools.LogSchedule, run.Schedule, tools.LogSession, run.SessionID, tools.LogErr, err)
	}
	return run
}

// activeRun returns the schedule's newest run whose turn is still going (or
// whose session is not started yet), nil when none.
func (s *Scheduler) activeRun(ctx context.Context, name string) (*store.ScheduleRun, error) {
	runs, err := s.store.RunningRuns(ctx, name)
	if err != nil {
		return nil, err
	}
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if r.SessionID == "" {
			return &r, nil
		}
		sess, err := s.engine.Session(ctx, r.SessionID)
		if errors.Is(err, engine.ErrNotFound) {
			return &r, nil
		}
		if err != nil {
			return nil, err
		}
		seq, err := s.inputSeq(ctx, r.SessionID)
		if err != nil {
			return nil, err
		}
		if seq == 0 || !turnOver(sess, seq) {
			return &r, nil
		}
		// The turn is over and its watcher is about to record it.
	}
	return nil, nil
}

// inputSeq returns the seq of the session's first user.message, 0 when it
// has none yet.
func (s *Scheduler) inputSeq(ctx context.Context, sessionID string) (int64, error) {
	evs, err := s.engine.Events(ctx, sessionID, 0, 20)
	if err != nil {
		return 0, err
	}
	for _, ev := range evs {
		if ev.Type == engine.EventUserMessage {
			return ev.Seq, nil
		}
	}
	return 0, nil
}

// pickUp takes over the runs a previous process left running: it makes
// sure each has its session and input (idempotent on the run's key, so
// nothing runs twice) and watches it. Called with s.mu held.
func (s *Scheduler) pickUp(ctx context.Context) error {
	runs, err := s.store.RunningRuns(ctx, "")
	if err != nil {
		return err
	}
	for _, r := range runs {
		if s.watching.has(r) {
			continue // followed here already
		}
		if e := s.byName[r.Schedule]; e != nil {
			s.start(ctx, e, r)
			continue
		}
		// Removed from the config: watch what exists, start nothing.
		cfg := config.ScheduleConfig{Name: r.Schedule}
		var seq int64
		if r.SessionID != "" {
			if seq, err = s.inputSeq(ctx, r.SessionID); err != nil && !errors.Is(err, engine.ErrNotFound) {
				return err
			}
		}
		if seq == 0 {
			s.finish(ctx, cfg, r, store.RunFailed, "the schedule is no longer configured; the run never started")
			continue
		}
		s.watchAsync(cfg, r, seq)
	}
	return nil
}
