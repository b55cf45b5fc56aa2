package engine

import "time"

// The defaults New uses for a Config field left zero. bot/config's
// defaults refer to these, so a key the config leaves unset and an engine
// built without the config agree; the one deliberate difference is
// limits.max_running_turns (see bot/config's defaultMaxRunningTurns).
const (
	DefaultMaxRunningTurns   = 16 // an engine embedded without a config: modest
	DefaultMaxQueuedTurns    = 256
	DefaultMaxToolIterations = 5
	DefaultMaxOutputBytes    = 64 << 10
	DefaultMaxParallelTools  = 4
	DefaultToolTimeout       = 60 * time.Second
	DefaultApprovalTTL       = 168 * time.Hour
	DefaultExpirySweep       = time.Minute
	DefaultLeaseTTL          = 30 * time.Second
	DefaultPollInterval      = time.Second
)
