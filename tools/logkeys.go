package tools

// Log attribute keys, one name per meaning, shared by every package so that
// a search for session_id (or err) finds every line about it. They live in
// tools because it is the leaf every package of brain may import; packages
// refer to them, usually through short local names.
const (
	LogErr        = "err"
	LogSession    = "session_id"
	LogTurn       = "turn_id"
	LogTool       = "tool"
	LogRequestID  = "request_id"
	LogMethod     = "method"
	LogPath       = "path"
	LogAddr       = "addr"
	LogThreadKey  = "thread_key"    // a platform thread: slack:TEAM:CHANNEL:TS or linear:SESSION
	LogPlatform   = "platform"      // slack or linear: the bridge or channel that logged
	LogComponent  = "component"     // a subsystem that is not a platform, e.g. mcp
	LogSlackChan  = "slack_channel" // a Slack channel id (not a platform)
	LogSlackTS    = "thread_ts"     // a Slack message or thread timestamp
	LogRetryAfter = "retry_after"   // how long a rate-limited call waits
	LogSchedule   = "schedule"
	LogKind       = "kind"
	LogIgnored    = "ignored"
	// The activity lines of turns and tools (bot/telemetry).
	LogOrigin       = "origin"
	LogAgent        = "agent"
	LogOutcome      = "outcome"
	LogCode         = "code"
	LogDuration     = "duration"
	LogRounds       = "rounds"
	LogInputs       = "inputs"
	LogInputTokens  = "input_tokens"
	LogOutputTokens = "output_tokens"
	LogCacheRead    = "cache_read_input_tokens"
	LogCacheWrite   = "cache_creation_input_tokens"
	LogUnknown      = "unknown_outcome"
	LogReason       = "reason"
	// The daemon's own lines (bot).
	LogDataDir = "data_dir"
	LogStorage = "storage"
	LogReplica = "replica"
	LogKey     = "key"   // a config key
	LogVar     = "var"   // an environment variable
	LogKeys    = "keys"  // the config keys that use it
	LogGrace   = "grace" // the shutdown grace period
	LogSet     = "set"   // how to set what is missing
	LogURL     = "url"
	LogCount   = "count"
)
