package slackhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"brain/internal/threadkey"
)

// EventResult is what one Events API envelope amounts to: a challenge to
// echo, an Item to record, or neither (Ignored says why).
type EventResult struct {
	Challenge string // set for url_verification
	Item      *Item  // set for a message worth recording
	EventID   string // the envelope's event_id, when it has one
	Ignored   string // why neither is set, for debug logs
}

// envelope is the outer Events API JSON; Event is decoded separately so an
// event type with unexpected field shapes cannot fail the envelope.
type envelope struct {
	Type           string          `json:"type"`
	Challenge      string          `json:"challenge"`
	TeamID         string          `json:"team_id"`
	EventID        string          `json:"event_id"`
	Event          json.RawMessage `json:"event"`
	Authorizations []struct {
		UserID string `json:"user_id"`
		IsBot  bool   `json:"is_bot"`
	} `json:"authorizations"`
}

// messageEvent holds the fields of app_mention and message events we use.
type messageEvent struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	User        string `json:"user"`
	BotID       string `json:"bot_id"`
	Team        string `json:"team"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type"`
	Text        string `json:"text"`
	TS          string `json:"ts"`
	ThreadTS    string `json:"thread_ts"`
	Tab         string `json:"tab"` // app_home_opened
	Files       []struct {
		ID                 string `json:"id"`
		Name               string `json:"name"`
		Mimetype           string `json:"mimetype"`
		Size               int64  `json:"size"`
		Mode               string `json:"mode"`
		URLPrivateDownload string `json:"url_private_download"`
	} `json:"files"`
}

// maxFiles bounds the files taken from one message.
const maxFiles = 20

// ParseEvent parses an Events API envelope (an HTTP request body, or a
// Socket Mode events_api payload). botUserID is the bot's user id (U...);
// when empty, the envelope's bot authorization is used instead. Only JSON
// that cannot be decoded is an error; anything else it does not turn into
// an Item is reported in Ignored. It never panics.
func ParseEvent(body []byte, botUserID string) (EventResult, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return EventResult{}, fmt.Errorf("parse slack event envelope: %w", err)
	}
	res := EventResult{EventID: env.EventID}
	switch env.Type {
	case "url_verification":
		if env.Challenge == "" {
			return EventResult{}, errors.New("parse slack event envelope: url_verification without challenge")
		}
		res.Challenge = env.Challenge
		return res, nil
	case "event_callback":
	default:
		res.Ignored = "envelope type " + quote(env.Type)
		return res, nil
	}
	if len(env.Event) == 0 {
		res.Ignored = "event_callback without event"
		return res, nil
	}
	// One decode of the inner event serves the common case, a message;
	// Slack's agent events (whose fields differ) are decoded again as such.
	var ev messageEvent
	err := json.Unmarshal(env.Event, &ev)
	if err != nil || isAgentEvent(ev.Type) {
		if it, why, ok := parseAgentEvent(env); ok {
			res.Item, res.Ignored = it, why
			return res, nil
		}
	}
	if err != nil {
		// Other event types (user_change, channel_created, ...) use objects
		// where messages use strings; only a broken message is an error.
		var typeOnly struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(env.Event, &typeOnly) == nil && typeOnly.Type != "message" && typeOnly.Type != "app_mention" && typeOnly.Type != "app_home_opened" {
			res.Ignored = "event type " + quote(typeOnly.Type)
			return res, nil
		}
		return EventResult{}, fmt.Errorf("parse slack event %s: %w", env.EventID, err)
	}
	if botUserID == "" {
		for _, a := range env.Authorizations {
			if a.IsBot && a.UserID != "" {
				botUserID = a.UserID
				break
			}
		}
	}
	if ev.Type == "app_home_opened" {
		return homeOpened(res, env, ev), nil
	}
	if why := ignoreMessage(&ev, botUserID); why != "" {
		res.Ignored = why
		return res, nil
	}
	team := firstNonEmpty(env.TeamID, ev.Team)
	root := firstNonEmpty(ev.ThreadTS, ev.TS)
	if !allValid(team, ev.Channel, ev.User, ev.TS, root) || (env.EventID != "" && !validID(env.EventID)) {
		res.Ignored = "message with missing or malformed ids"
		return res, nil
	}
	mention := ev.Type == "app_mention" || mentions(ev.Text, botUserID)
	keys := make([]string, 0, 2)
	if env.EventID != "" {
		keys = append(keys, "event:"+env.EventID)
	}
	keys = append(keys, "msg:"+ev.Channel+":"+ev.TS)
	res.Item = &Item{
		DedupeKeys: keys,
		ThreadKey:  threadKey(team, ev.Channel, root),
		Body: &Message{
			EventID:     env.EventID,
			EventType:   ev.Type,
			Team:        team,
			Channel:     ev.Channel,
			ChannelType: ev.ChannelType,
			User:        ev.User,
			Text:        stripMention(ev.Text, botUserID),
			TS:          ev.TS,
			ThreadTS:    root,
			Mention:     mention,
			Files:       files(ev),
		},
	}
	return res, nil
}

// files keeps the shared files that can be fetched: tombstoned, hidden
// and external files have no download URL.
func files(ev messageEvent) []File {
	var out []File
	for _, f := range ev.Files {
		if len(out) == maxFiles {
			break
		}
		if !validID(f.ID) || f.URLPrivateDownload == "" || len(f.URLPrivateDownload) > 2048 || f.Mode == "tombstone" || f.Mode == "hidden_by_limit" || f.Mode == "external" {
			continue
		}
		name := f.Name
		if len(name) > 255 {
			name = name[:255]
		}
		out = append(out, File{ID: f.ID, Name: name, Mimetype: f.Mimetype, Size: f.Size, URL: f.URLPrivateDownload})
	}
	return out
}

// homeOpened turns app_home_opened on the Home tab into an Item.
func homeOpened(res EventResult, env envelope, ev messageEvent) EventResult {
	team := firstNonEmpty(env.TeamID, ev.Team)
	if ev.Tab != "home" || env.EventID == "" || !allValid(team, ev.User, env.EventID) {
		res.Ignored = "app_home_opened not on the home tab, or with malformed ids"
		return res
	}
	res.Item = &Item{
		DedupeKeys: []string{"event:" + env.EventID},
		ThreadKey:  threadkey.SlackHome(team, ev.User),
		Body:       &Home{User: ev.User, Team: team},
	}
	return res
}

// ignoreMessage says why an inner event is not a person's message for us,
// or "" when it is.
func ignoreMessage(ev *messageEvent, botUserID string) string {
	switch {
	case ev.Type != "message" && ev.Type != "app_mention":
		return "event type " + quote(ev.Type)
	case ev.Subtype != "" && ev.Subtype != "thread_broadcast" && ev.Subtype != "file_share":
		// message_changed, message_deleted, bot_message, channel_join, ...
		return "message subtype " + quote(ev.Subtype)
	case ev.BotID != "":
		return "message from a bot"
	case ev.User == "":
		return "message without user"
	case botUserID != "" && ev.User == botUserID:
		return "the bot's own message"
	case ev.ChannelType != "" && ev.ChannelType != "channel" && ev.ChannelType != "group" &&
		ev.ChannelType != "im" && ev.ChannelType != "mpim": // app_mention carries none
		return "channel type " + quote(ev.ChannelType)
	}
	return ""
}

// mentions reports whether text mentions the user: <@U123> or <@U123|name>.
func mentions(text, userID string) bool {
	if userID == "" {
		return false
	}
	return strings.Contains(text, "<@"+userID+">") || strings.Contains(text, "<@"+userID+"|")
}

// stripMention removes a leading mention of the bot and surrounding space.
func stripMention(text, botUserID string) string {
	text = strings.TrimSpace(text)
	if botUserID == "" {
		return text
	}
	rest, ok := strings.CutPrefix(text, "<@"+botUserID)
	if !ok {
		return text
	}
	switch {
	case strings.HasPrefix(rest, ">"):
		rest = rest[1:]
	case strings.HasPrefix(rest, "|"):
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return text
		}
		rest = rest[end+1:]
	default: // a longer id that merely starts with the bot's
		return text
	}
	return strings.TrimSpace(rest)
}

// quote bounds and quotes an attacker-chosen string for a log line.
func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%q", s)
}
