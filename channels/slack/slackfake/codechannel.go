package slackfake

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"unicode/utf8"
)

// Limits of code channels, as Slack documents them
// (agents.conversations.setProperties and setView).
const (
	maxContextItems  = 5
	maxContextKey    = 64
	maxContextLabel  = 128
	maxContextURL    = 2048
	maxViewContent   = 1_000_000
	codeChannelIDFmt = "C0CODE%03d"
)

// CodeChannel is a code channel as the fake holds it.
type CodeChannel struct {
	ID        string
	Name      string
	SessionID string
	// OriginChannel and OriginTS are the message the session started from.
	OriginChannel string
	OriginTS      string
	// ContextBar is the context bar as last set, each item's JSON.
	ContextBar []ContextItem
	// Diff is the diff view's content ("" none), with its branches.
	Diff, DiffBase, DiffHead string
	Archived                 bool
}

// ContextItem is one item of a code channel's context bar.
type ContextItem struct {
	Key      string `json:"key"`
	Label    string `json:"label"`
	Icon     string `json:"icon,omitempty"`
	URL      string `json:"url,omitempty"`
	ItemType string `json:"item_type,omitempty"`
}

type codeChannels struct {
	byID      map[string]*CodeChannel
	bySession map[string]string
}

// CodeChannels returns the code channels created so far, in creation
// order.
func (s *Server) CodeChannels() []CodeChannel {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CodeChannel
	for i := 1; i <= len(s.code.byID); i++ {
		c := *s.code.byID[fmt.Sprintf(codeChannelIDFmt, i)]
		c.ContextBar = slices.Clone(c.ContextBar)
		out = append(out, c)
	}
	return out
}

// CodeChannel returns one code channel.
func (s *Server) CodeChannel(id string) (CodeChannel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.code.byID[id]
	if !ok {
		return CodeChannel{}, false
	}
	out := *c
	out.ContextBar = slices.Clone(c.ContextBar)
	return out, true
}

// ArchiveCodeChannel archives a code channel as a person would in
// Slack: posting there is refused (is_archived) from then on.
func (s *Server) ArchiveCodeChannel(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.code.byID[id]
	if ok {
		c.Archived = true
	}
	return ok
}

func (s *Server) codeChannelLocked(method string, p url.Values) map[string]any {
	if s.code.byID == nil {
		s.code = codeChannels{byID: map[string]*CodeChannel{}, bySession: map[string]string{}}
	}
	if method == "agents.conversations.create" {
		return s.createCodeChannelLocked(p)
	}
	c, ok := s.code.byID[p.Get("channel_id")]
	if !ok {
		return apiError("channel_not_found")
	}
	switch method {
	case "agents.conversations.setProperties":
		return setProperties(c, p)
	case "agents.conversations.setView":
		return setView(c, p)
	case "agents.conversations.archive":
		if c.Archived {
			return apiError("already_archived")
		}
		c.Archived = true
		return map[string]any{"ok": true}
	}
	return apiError("unknown_method")
}

// createCodeChannelLocked creates a code channel, or returns the one of
// the same session_id (the call is idempotent on it).
func (s *Server) createCodeChannelLocked(p url.Values) map[string]any {
	origin, originTS := p.Get("origin_channel_id"), p.Get("origin_message_ts")
	if (origin == "") != (originTS == "") {
		return apiError("invalid_arguments") // the two come together
	}
	if origin == "" && p.Get("name") == "" {
		return apiError("invalid_name")
	}
	if id, ok := s.code.bySession[p.Get("session_id")]; ok && p.Get("session_id") != "" {
		return map[string]any{"ok": true, "channel_id": id}
	}
	c := &CodeChannel{ID: fmt.Sprintf(codeChannelIDFmt, len(s.code.byID)+1), Name: p.Get("name"),
		SessionID: p.Get("session_id"), OriginChannel: origin, OriginTS: originTS}
	s.code.byID[c.ID] = c
	if c.SessionID != "" {
		s.code.bySession[c.SessionID] = c.ID
	}
	return map[string]any{"ok": true, "channel_id": c.ID}
}

func setProperties(c *CodeChannel, p url.Values) map[string]any {
	raw := p.Get("code_channel")
	if raw == "" && p.Get("agent_resource") == "" {
		return apiError("invalid_arguments") // at least one property
	}
	if raw != "" {
		var props struct {
			Items *[]ContextItem `json:"context_bar_items"`
		}
		if json.Unmarshal([]byte(raw), &props) != nil {
			return apiError("invalid_arguments")
		}
		if props.Items != nil {
			items := *props.Items
			if len(items) > maxContextItems {
				return apiError("too_many_items")
			}
			for _, it := range items {
				if it.Key == "" || it.Label == "" || utf8.RuneCountInString(it.Key) > maxContextKey ||
					utf8.RuneCountInString(it.Label) > maxContextLabel || len(it.URL) > maxContextURL {
					return apiError("invalid_arguments")
				}
			}
			c.ContextBar = items
		}
	}
	return map[string]any{"ok": true, "channel_id": c.ID}
}

func setView(c *CodeChannel, p url.Values) map[string]any {
	switch typ := p.Get("type"); typ {
	case "diff":
		content := p.Get("content")
		if content == "" {
			return apiError("invalid_arguments")
		}
		if len(content) > maxViewContent {
			return apiError("content_too_large")
		}
		c.Diff, c.DiffBase, c.DiffHead = content, p.Get("base_branch"), p.Get("head_branch")
		return map[string]any{"ok": true, "channel_id": c.ID, "view_id": "V0DIFF" + c.ID, "type": "diff"}
	default:
		return apiError("invalid_view_type") // the fake knows diff views only
	}
}
