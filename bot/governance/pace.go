package governance

import "time"

// pace sizes the retention job's steps (a batch of deletions, a vacuum
// step) by time rather than by count: each step is asked to take about
// budget, so a turn that queues behind one waits at most about that long
// however loaded the machine is. After each step the job rests: three
// times as long as the step took (restFactor) while no turn runs, longer
// while turns do (duty).
// A step that took too long shrinks the next in proportion; one that was
// quick lets the next grow, at most doubling, up to max. While turns run
// the next step is a busyShare of that (next): whichever turn meets it
// waits a quarter as long, and the job still deletes at a rate that
// grows with the machine's speed (the smallest steps would not:
// docs/benchmarks.md).
type pace struct {
	budget   time.Duration
	min, max int
	size     int
	// duty is the share of the time the job works while turns run.
	duty float64
}

// DefaultDuty is Retention.Duty's default: while turns run the job works
// a tenth of the time, resting nine times as long as each step took.
const DefaultDuty = 0.1

// newPace starts at the smallest step: the first one measures the
// machine before a large one can hold a turn up. A duty outside (0, 1]
// is DefaultDuty.
func newPace(budget time.Duration, lo, hi int, duty float64) *pace {
	hi = max(hi, 1)
	lo = min(max(lo, 1), hi)
	if duty <= 0 || duty > 1 {
		duty = DefaultDuty
	}
	return &pace{budget: budget, min: lo, max: hi, size: lo, duty: duty}
}

// busyShare divides the measured step while turns run.
const busyShare = 4

// next is the size of the next step: what the last steps measured, a
// busyShare of it while turns run (busy), never below min.
func (p *pace) next(busy bool) int {
	if busy {
		return max(p.size/busyShare, p.min)
	}
	return p.size
}

// took records that a step did n units of work in d and returns how long
// to rest before the next: busy says turns ran when it ended.
func (p *pace) took(n int, d time.Duration, busy bool) time.Duration {
	if n > 0 {
		want := p.size * 2
		if d > 0 {
			// n units took d: the budget holds n*budget/d of them.
			want = min(want, int(int64(n)*int64(p.budget)/int64(d)))
		}
		p.size = min(max(want, p.min), p.max)
	}
	d = max(d, 0)
	if busy {
		return time.Duration(float64(d) * (1 - p.duty) / p.duty)
	}
	return d * restFactor
}

// restFactor is how much longer than a step the job rests after it while
// no turn runs: it holds at most a quarter of the database (the writer of
// SQLite, a share of the CPU PostgreSQL's backends share with the turns').
const restFactor = 3
