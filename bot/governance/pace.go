package governance

import "time"

// pace sizes the retention job's steps (a batch of deletions, a vacuum
// step) by time rather than by count: each step is asked to take about
// budget, so a turn that queues behind one waits at most about that long
// however loaded the machine is, and after each step the job rests three
// times as long as the step took (restFactor).
// A step that took too long shrinks the next in proportion; one that was
// quick lets the next grow, at most doubling, up to max.
type pace struct {
	budget   time.Duration
	min, max int
	size     int
}

// newPace starts at the smallest step: the first one measures the
// machine before a large one can hold a turn up.
func newPace(budget time.Duration, lo, hi int) *pace {
	hi = max(hi, 1)
	lo = min(max(lo, 1), hi)
	return &pace{budget: budget, min: lo, max: hi, size: lo}
}

// next is the size of the next step.
func (p *pace) next() int { return p.size }

// took records that a step did n units of work in d and returns how long
// to rest before the next.
func (p *pace) took(n int, d time.Duration) time.Duration {
	if n > 0 {
		want := p.size * 2
		if d > 0 {
			// n units took d: the budget holds n*budget/d of them.
			want = min(want, int(int64(n)*int64(p.budget)/int64(d)))
		}
		p.size = min(max(want, p.min), p.max)
	}
	return max(d, 0) * restFactor
}

// restFactor is how much longer than a step the job rests after it: it
// holds at most a quarter of the database (the writer of SQLite, a share
// of the CPU PostgreSQL's backends share with the turns').
const restFactor = 3
