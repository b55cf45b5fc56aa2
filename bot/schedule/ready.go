package schedule

import (
	"context"
	"errors"
)

// Ready reports whether the schedules are loaded and their loop runs:
// between Start and Stop.
func (s *Scheduler) Ready(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return errors.New("schedules are stopped")
	case !s.started:
		return errors.New("schedules are not loaded yet")
	}
	return nil
}
