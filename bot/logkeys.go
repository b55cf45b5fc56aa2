package bot

// Log attribute keys shared by bot's services.
const (
	logErr     = "err"
	logSession = "session_id"
	logAddr    = "addr"
)
