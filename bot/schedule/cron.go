package schedule

import "time"

// next returns the first fire time strictly after t, zero when there is
// none. Cron fields are matched against the local wall clock: a local time
// that occurs twice (clocks go back) fires at its first occurrence only; a
// local time that does not exist (clocks go forward) fires at the instant
// the clock jumps past it.
func (e *scheduleEntry) next(t time.Time) time.Time {
	if e.spec == nil {
		return e.sched.Next(t)
	}
	w := wallClock(t.In(e.loc))
	// Wall times that map to an instant at or before t (the second pass of
	// a repeated hour, times merged into a jump) are passed over.
	for range 100 {
		w = e.spec.Next(w)
		if w.IsZero() {
			return time.Time{}
		}
		if at := localInstant(w, e.loc); at.After(t) {
			return at
		}
	}
	return time.Time{}
}

// due returns the most recent fire time in (from, now] (zero when none) and
// how many fire times that interval holds.
func (e *scheduleEntry) due(from, now time.Time) (time.Time, int) {
	var last time.Time
	n := 0
	for at := e.next(from); !at.IsZero() && !at.After(now); at = e.next(at) {
		last = at
		n++
	}
	return last, n
}

// wallClock reads t's local date and time as a UTC time, a clock without
// DST for matching cron fields.
func wallClock(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
}

// localInstant returns the instant at which the wall clock of loc shows w
// (a wall time read as UTC): the earlier one when it shows it twice, the
// instant it jumps past w when it never shows it. time.Date alone does not
// say which it picks in either case.
func localInstant(w time.Time, loc *time.Location) time.Time {
	guess := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc)
	start, end := guess.ZoneBounds()
	offsets := []time.Time{guess}
	if !start.IsZero() {
		offsets = append(offsets, start.Add(-time.Second))
	}
	if !end.IsZero() {
		offsets = append(offsets, end)
	}
	var best time.Time
	for _, z := range offsets {
		_, off := z.Zone()
		at := w.Add(-time.Duration(off) * time.Second).In(loc)
		if wallClock(at).Equal(w) && (best.IsZero() || at.Before(best)) {
			best = at
		}
	}
	if !best.IsZero() {
		return best
	}
	for _, b := range []time.Time{start, end} {
		if !b.IsZero() && wallClock(b).After(w) && !wallClock(b.Add(-time.Nanosecond)).After(w) {
			return b
		}
	}
	return guess
}
