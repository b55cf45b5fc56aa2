package slackfake

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Limits of the agent methods, as Slack documents them.
const (
	maxStreamText = 12000 // markdown_text of one call
	maxPrompts    = 4
)

// Prompt is a suggested prompt of an assistant thread.
type Prompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// AgentStatus returns the status agents.sessions.setStatus last set for
// the thread ("" when never set).
func (s *Server) AgentStatus(channel, threadTS string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agents[threadKey{channel, threadTS}]
}

// Title returns the title assistant.threads.setTitle last set.
func (s *Server) Title(channel, threadTS string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.titles[threadKey{channel, threadTS}]
}

// Prompts returns the suggested prompts last set for the thread.
func (s *Server) Prompts(channel, threadTS string) []Prompt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prompts[threadKey{channel, threadTS}]
}

// agentLocked answers the streaming, agent-session and assistant-thread
// methods.
func (s *Server) agentLocked(method string, p url.Values) map[string]any {
	switch method {
	case "chat.startStream":
		return s.startStreamLocked(p)
	case "chat.appendStream":
		return s.appendStreamLocked(p, false)
	case "chat.stopStream":
		return s.appendStreamLocked(p, true)
	case "agents.sessions.setStatus":
		switch p.Get("status") {
		case "processing", "active", "suspended", "closed":
		default:
			return apiError("invalid_status")
		}
		// A code channel's session has no thread: thread_ts must be
		// omitted there and given everywhere else.
		_, code := s.code.byID[p.Get("channel_id")]
		if p.Get("channel_id") == "" || (p.Get("thread_ts") == "") != code {
			return apiError("invalid_arguments")
		}
		k := threadKey{p.Get("channel_id"), p.Get("thread_ts")}
		s.agents[k] = p.Get("status")
		return map[string]any{"ok": true, "status": p.Get("status"), "agent_status": p.Get("status")}
	case "assistant.threads.setTitle":
		if p.Get("channel_id") == "" || p.Get("thread_ts") == "" || p.Get("title") == "" {
			return apiError("invalid_arguments")
		}
		s.titles[threadKey{p.Get("channel_id"), p.Get("thread_ts")}] = p.Get("title")
		return map[string]any{"ok": true}
	case "assistant.threads.setSuggestedPrompts":
		var prompts []Prompt
		if p.Get("channel_id") == "" || json.Unmarshal([]byte(p.Get("prompts")), &prompts) != nil ||
			len(prompts) == 0 || len(prompts) > maxPrompts {
			return apiError("invalid_arguments")
		}
		s.prompts[threadKey{p.Get("channel_id"), p.Get("thread_ts")}] = prompts
		return map[string]any{"ok": true}
	}
	if strings.HasPrefix(method, "agents.conversations.") {
		return s.codeChannelLocked(method, p)
	}
	return s.dispatchContentLocked(method, p) // users, files, groups, views
}

// streamText is what a streaming call adds to the message: markdown_text
// and the text of markdown_text chunks. It records the other chunks.
func streamText(p url.Values) (text string, chunks []json.RawMessage, code string) {
	text = p.Get("markdown_text")
	if raw := p.Get("chunks"); raw != "" {
		var cs []json.RawMessage
		if json.Unmarshal([]byte(raw), &cs) != nil {
			return "", nil, "invalid_chunks"
		}
		for _, c := range cs {
			var head struct {
				Type string `json:"type"`
				Text string `json:"text"`
				ID   string `json:"id"`
			}
			if json.Unmarshal(c, &head) != nil {
				return "", nil, "invalid_chunks"
			}
			switch head.Type {
			case "markdown_text":
				text += head.Text
			case "task_update":
				if head.ID == "" {
					return "", nil, "invalid_chunks"
				}
				chunks = append(chunks, c)
			case "plan_update", "blocks":
				chunks = append(chunks, c)
			default:
				return "", nil, "invalid_chunks"
			}
		}
	}
	if utf8.RuneCountInString(text) > maxStreamText {
		return "", nil, "msg_too_long"
	}
	return text, chunks, ""
}

func (s *Server) startStreamLocked(p url.Values) map[string]any {
	channel, thread := p.Get("channel"), p.Get("thread_ts")
	if channel == "" {
		return apiError("channel_not_found")
	}
	if thread == "" {
		return apiError("invalid_arguments")
	}
	// Outside a DM Slack must know whom the stream is for.
	if !strings.HasPrefix(channel, "D") && (p.Get("recipient_user_id") == "" || p.Get("recipient_team_id") == "") {
		return apiError("missing_recipient_user_id")
	}
	text, chunks, code := streamText(p)
	if code != "" {
		return apiError(code)
	}
	m := &Message{Channel: channel, TS: s.nextTSLocked(), ThreadTS: thread, Text: text,
		Streamed: true, Streaming: true, Chunks: chunks}
	k := threadKey{channel, m.TS}
	s.messages[k] = m
	s.order = append(s.order, k)
	s.posted++
	return map[string]any{"ok": true, "channel": channel, "ts": m.TS}
}

func (s *Server) appendStreamLocked(p url.Values, stop bool) map[string]any {
	m, ok := s.messages[threadKey{p.Get("channel"), p.Get("ts")}]
	if !ok {
		return apiError("message_not_found")
	}
	if !m.Streaming {
		return apiError("message_not_in_streaming_state")
	}
	text, chunks, code := streamText(p)
	if code != "" {
		return apiError(code)
	}
	if stop && p.Get("blocks") != "" {
		if code := checkBlocks(p.Get("blocks")); code != "" {
			return apiError(code)
		}
		m.Blocks = json.RawMessage(p.Get("blocks"))
	}
	m.Text += text
	m.Chunks = append(m.Chunks, chunks...)
	if stop {
		m.Streaming = false
	} else {
		m.Appends++
	}
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS}
}
