package engine

// Stats is a snapshot of the worker pool.
type Stats struct {
	RunningTurns int
	QueuedTurns  int
	Counters     map[string]int64
}

// Stats reports the pool's state and the engine's counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Stats{RunningTurns: len(e.slots), QueuedTurns: e.waiting, Counters: e.counters.snapshot()}
}

// counters are monotonically increasing totals, guarded by Engine.mu.
type counters map[string]int64

func (c *counters) add(name string, n int64) {
	if *c == nil {
		*c = counters{}
	}
	(*c)[name] += n
}

func (c counters) snapshot() map[string]int64 {
	out := make(map[string]int64, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

func (e *Engine) count(name string) {
	e.mu.Lock()
	e.counters.add(name, 1)
	e.mu.Unlock()
}
