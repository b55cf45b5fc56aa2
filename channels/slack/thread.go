package slack

import "brain/internal/threadkey"

// Thread is a Slack thread as brain keys its session: the workspace, the
// channel and the timestamp of the thread's root message. Its Key is the
// session's thread key, "slack:TEAM:CHANNEL:TS"; URL opens it in Slack.
// The type lives in internal/threadkey, where webhooks/slackhook builds
// the keys it parses.
type Thread = threadkey.Slack

// ParseThread reads a thread key; ok is false for a key of another
// platform or of no thread (an App Home, a modal).
func ParseThread(key string) (t Thread, ok bool) { return threadkey.ParseSlack(key) }
