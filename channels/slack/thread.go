package slack

import (
	"net/url"
	"strings"
)

// Thread is a Slack thread as brain keys its session: the workspace, the
// channel and the timestamp of the thread's root message. Its Key is the
// session's thread key, "slack:TEAM:CHANNEL:TS".
type Thread struct {
	Team, Channel, TS string
}

// Key is the thread's session key.
func (t Thread) Key() string { return "slack:" + t.Team + ":" + t.Channel + ":" + t.TS }

// ParseThread reads a thread key; ok is false for a key of another
// platform or of no thread (an App Home, a modal).
func ParseThread(key string) (t Thread, ok bool) {
	parts := strings.Split(key, ":")
	if len(parts) != 4 || parts[0] != "slack" {
		return Thread{}, false
	}
	return Thread{Team: parts[1], Channel: parts[2], TS: parts[3]}, true
}

// URL opens the thread in Slack's web client.
func (t Thread) URL() string {
	return "https://app.slack.com/client/" + url.PathEscape(t.Team) + "/" + url.PathEscape(t.Channel) +
		"/thread/" + url.PathEscape(t.Channel+"-"+t.TS)
}
