// Package threadkey is the string protocol naming a platform's
// conversation in a session's thread key, one type per platform with Key
// and a Parse: the webhook packages that receive a platform's traffic
// build keys, and the channel packages that post to it parse them. It is
// a leaf because webhooks may not import channels; channels/slack and
// channels/linear own the types (slack.Thread, linear.Thread are these).
package threadkey

import (
	"net/url"
	"strings"
)

// Slack is a Slack thread as brain keys its session: the workspace, the
// channel and the timestamp of the thread's root message. Its Key is
// "slack:TEAM:CHANNEL:TS".
type Slack struct {
	Team, Channel, TS string
}

// Key is the thread's session key.
func (t Slack) Key() string { return "slack:" + t.Team + ":" + t.Channel + ":" + t.TS }

// ParseSlack reads a Slack thread key; ok is false for a key of another
// platform. The keys of a person's App Home and modals (SlackHome,
// SlackView) parse too, with Channel "home" or "view" (never a channel
// id).
func ParseSlack(key string) (t Slack, ok bool) {
	parts := strings.Split(key, ":")
	if len(parts) != 4 || parts[0] != "slack" {
		return Slack{}, false
	}
	return Slack{Team: parts[1], Channel: parts[2], TS: parts[3]}, true
}

// URL opens the thread in Slack's web client.
func (t Slack) URL() string {
	return "https://app.slack.com/client/" + url.PathEscape(t.Team) + "/" + url.PathEscape(t.Channel) +
		"/thread/" + url.PathEscape(t.Channel+"-"+t.TS)
}

// SlackHome is the key of a person's App Home items, so they are worked
// in order: "slack:TEAM:home:USER".
func SlackHome(team, user string) string { return Slack{Team: team, Channel: "home", TS: user}.Key() }

// SlackView is the key of a person's submitted modals:
// "slack:TEAM:view:USER".
func SlackView(team, user string) string { return Slack{Team: team, Channel: "view", TS: user}.Key() }

// Linear is a Linear agent session, brain's thread there. Its Key is
// "linear:SESSION".
type Linear struct {
	Session string
}

// Key is the thread's session key.
func (t Linear) Key() string { return "linear:" + t.Session }

// ParseLinear reads a Linear thread key; ok is false for a key of another
// platform.
func ParseLinear(key string) (t Linear, ok bool) {
	id, ok := strings.CutPrefix(key, "linear:")
	if !ok || id == "" {
		return Linear{}, false
	}
	return Linear{Session: id}, true
}

// Place is the conversation place a thread key's thread is in, the
// memory tool's channel scope: a Slack channel ("slack:TEAM:CHANNEL") or a
// GitHub repository ("github:owner/repo", lower case as GitHub compares
// it). ok is false for keys that name no shared place: a Linear agent
// session (its key carries no team), the Slack Home tab, other origins.
func Place(key string) (place string, ok bool) {
	if t, ok := ParseSlack(key); ok {
		if t.Team == "" || t.Channel == "" || t.Channel == "home" || t.Channel == "view" {
			return "", false
		}
		return "slack:" + t.Team + ":" + t.Channel, true
	}
	if rest, ok := strings.CutPrefix(key, "github:"); ok {
		repo, _, ok := strings.Cut(rest, "#")
		owner, name, ok2 := strings.Cut(repo, "/")
		if !ok || !ok2 || owner == "" || name == "" || strings.Contains(name, "/") {
			return "", false
		}
		return "github:" + strings.ToLower(repo), true
	}
	return "", false
}
