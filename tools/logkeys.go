package tools

// Log attribute keys, one name per meaning, shared by every package so that
// a search for session_id (or err) finds every line about it. They live in
// tools because it is the leaf every package of brain may import; packages
// refer to them by these names, with no local aliases and no literal keys
// (bot/logkeys_test.go checks it).
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
	LogGrace   = "grace" // a grace period (shutdown, store outage)
	LogSet     = "set"   // how to set what is missing
	LogURL     = "url"
	LogCount   = "count"
	// Other subsystems' keys.
	LogApprovalID  = "approval_id"
	LogGroup       = "group"
	LogCall        = "call"
	LogLease       = "lease"
	LogMode        = "mode"
	LogApproval    = "approval"
	LogDecision    = "decision"
	LogMissed      = "missed"
	LogTrigger     = "trigger"
	LogTeam        = "team"
	LogBotUser     = "bot_user"
	LogUser        = "user"
	LogFile        = "file"
	LogRetryIn     = "retry_in"
	LogIssue       = "issue"
	LogThread      = "thread"
	LogExpiresAt   = "expires_at"
	LogInstall     = "install"
	LogAPIKey      = "api_key" // an API key's name, never the key
	LogBy          = "by"
	LogStatus      = "status"
	LogFireTime    = "fire_time"
	LogRunState    = "run_status"
	LogWho         = "who"
	LogOp          = "op"
	LogAttempt     = "attempt"
	LogCause       = "cause" // why a tool's calls fail (tools.Error.Cause)
	LogProvider    = "provider"
	LogModel       = "model"
	LogStream      = "stream"
	LogDelivery    = "delivery"
	LogEvent       = "event"
	LogDuplicate   = "duplicate"
	LogEventID     = "event_id"
	LogEnvelopeID  = "envelope_id"
	LogRetryNum    = "retry_num"
	LogRetryReason = "retry_reason"
	LogType        = "type"
	LogOrg         = "organization_id"
	LogWorkspace   = "workspace"
	LogMCPServer   = "mcp_server"
	LogStderr      = "stderr"
	LogTools       = "tools"              // how many tools
	LogProtocol    = "protocol"           // an MCP protocol revision
	LogElicit      = "elicitation_action" // accept, decline or cancel
	LogConnection  = "connection_id"
	LogPerson      = "person" // a person's id (store.Person), never a token
)
