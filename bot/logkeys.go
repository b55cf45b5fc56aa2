package bot

import "brain/tools"

// Log attribute keys shared by bot's services.
const (
	logErr     = tools.LogErr
	logSession = tools.LogSession
	logAddr    = tools.LogAddr
)
