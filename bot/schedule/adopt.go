package schedule

import (
	"context"
	"sync"
	"time"

	"brain/store"
	"brain/tools"
)

// adoptEvery is how often the scheduler looks for running runs that no
// watcher of its own follows: with several processes on one database,
// those of a process that died (the engine recovers their sessions; a
// watcher records how the runs ended).
const adoptEvery = 30 * time.Second

// watched is the set of runs this scheduler watches, by run key.
type watched struct {
	mu   sync.Mutex
	keys map[string]bool
}

// add marks the run watched; false when it already was.
func (w *watched) add(r store.ScheduleRun) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keys == nil {
		w.keys = map[string]bool{}
	}
	k := runKey(r)
	if w.keys[k] {
		return false
	}
	w.keys[k] = true
	return true
}

func (w *watched) done(r store.ScheduleRun) {
	w.mu.Lock()
	delete(w.keys, runKey(r))
	w.mu.Unlock()
}

func (w *watched) has(r store.ScheduleRun) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.keys[runKey(r)]
}

// adoptLoop adopts orphaned runs every adoptEvery until Stop.
func (s *Scheduler) adoptLoop(ctx context.Context) {
	tick := time.NewTicker(adoptEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if err := s.adopt(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("adopt schedule runs", tools.LogErr, err)
			}
		case <-ctx.Done():
			return
		}
	}
}

// adopt picks up the runs still running that this scheduler does not
// watch, as Start does: another process's, live or dead. Starting and
// sending are idempotent on the run's key and a run finishes once, so
// watching a live one too changes nothing.
func (s *Scheduler) adopt(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.stopped {
		return nil
	}
	return s.pickUp(ctx)
}
