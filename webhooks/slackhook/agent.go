package slackhook

import "encoding/json"

// Item kinds of Slack's agent events.
const (
	// KindStop is a person pressing Stop on an agent session
	// (agent_session_stopped).
	KindStop = "stop"
	// KindThreadStarted is a person opening a new assistant thread
	// (assistant_thread_started).
	KindThreadStarted = "thread_started"
)

// Stop is a person pressing Stop on an agent session.
type Stop struct{ Agent }

// ThreadStarted is a person opening a new assistant thread.
type ThreadStarted struct{ Agent }

// Agent is who did what in which agent thread, for Stop and ThreadStarted.
type Agent struct {
	EventID  string `json:"event_id,omitempty"`
	User     string `json:"user"`
	Team     string `json:"team"`
	Channel  string `json:"channel"`
	ThreadTS string `json:"thread_ts"`
}

// agentEvent holds the fields of agent_session_stopped and
// assistant_thread_started.
type agentEvent struct {
	Type     string `json:"type"`
	Channel  string `json:"channel"`
	ThreadTS string `json:"thread_ts"`
	User     string `json:"user"`
	Thread   *struct {
		UserID    string `json:"user_id"`
		ChannelID string `json:"channel_id"`
		ThreadTS  string `json:"thread_ts"`
	} `json:"assistant_thread"`
}

// The inner event types parseAgentEvent reads; their fields differ from a
// message's.
const (
	typeAgentStopped  = "agent_session_stopped"
	typeThreadStarted = "assistant_thread_started"
)

// isAgentEvent says whether an inner event of type typ is one
// parseAgentEvent reads.
func isAgentEvent(typ string) bool { return typ == typeAgentStopped || typ == typeThreadStarted }

// parseAgentEvent turns an agent event into an Item; ok is false for other
// event types, and why says why a malformed one is ignored.
func parseAgentEvent(env envelope) (it *Item, why string, ok bool) {
	var ev agentEvent
	if json.Unmarshal(env.Event, &ev) != nil {
		return nil, "", false
	}
	var a Agent
	var kind string
	switch ev.Type {
	case typeAgentStopped:
		kind = KindStop
		a = Agent{User: ev.User, Channel: ev.Channel, ThreadTS: ev.ThreadTS}
	case typeThreadStarted:
		if ev.Thread == nil {
			return nil, "assistant_thread_started without assistant_thread", true
		}
		kind = KindThreadStarted
		a = Agent{User: ev.Thread.UserID, Channel: ev.Thread.ChannelID, ThreadTS: ev.Thread.ThreadTS}
	default:
		return nil, "", false
	}
	a.Team, a.EventID = env.TeamID, env.EventID
	if !allValid(a.Team, a.User, a.Channel, a.ThreadTS) || env.EventID == "" || !validID(env.EventID) {
		return nil, ev.Type + " with missing or malformed ids", true
	}
	var body Body = &Stop{Agent: a}
	if kind == KindThreadStarted {
		body = &ThreadStarted{Agent: a}
	}
	return &Item{
		DedupeKeys: []string{"event:" + env.EventID},
		ThreadKey:  threadKey(a.Team, a.Channel, a.ThreadTS),
		Body:       body,
	}, "", true
}
